"""Token-less abuse of the HTTP edge, under daphne and under the Procfile's server (gunicorn + uvicorn).

    .venv/bin/python bench/edge_bench.py
    SERVERS=procfile .venv/bin/python bench/edge_bench.py     # only one of: daphne, procfile

For each server (one worker process, SQLite in a temporary file, on 127.0.0.1):
1. RSS of the serving process before and after a 100 MB multipart POST without a token to an upload
   route, streamed from a socket with its Content-Length, and how many bytes the server took before
   answering (it answers 413 as soon as it can; daphne reads everything first).
2. A 20 MB multipart of ~450k tiny fields without a token to the same route, while a probe fetches the
   login page every 20 ms: the longest probe wait (a stall of every other client of the process) and
   the CPU seconds the server process burned.
Every request is bounded by a timeout; the rate limits are raised so that they do not answer first.
"""

import os
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.realtime.servers import DaphneServer  # noqa: E402
from tests.security.procfile import ProcfileServer  # noqa: E402

SERVERS = os.environ.get("SERVERS", "daphne,procfile").split(",")
UPLOAD_PATH = "/api/v1/projects/1/tickets/1/attachments"
BIG = 100 * 1024 * 1024
TIMEOUT = 120


def serving_pid(server) -> int:
    """The process that runs the application: daphne itself, or gunicorn's one worker."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    return int(children[0]) if children else server.pid


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post_streamed(port: int, body_parts, length: int, boundary: str) -> tuple[str, int]:
    """POSTs a multipart body part by part; the status line and how many bytes went out before it came."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as connection:
        connection.sendall((f"POST {UPLOAD_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                            f"Content-Length: {length}\r\n\r\n").encode())
        connection.setblocking(True)
        answer = b""
        for part in body_parts:
            connection.settimeout(0)
            try:
                answer += connection.recv(4096)
            except BlockingIOError:
                pass
            if answer:
                break
            connection.settimeout(TIMEOUT)
            try:
                connection.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(part)
        connection.settimeout(TIMEOUT)
        try:
            while b"\r\n" not in answer:
                data = connection.recv(4096)
                if not data:
                    break
                answer += data
        except (ConnectionResetError, TimeoutError):
            pass
        return answer.split(b"\r\n", 1)[0].decode() or "(no answer)", sent


def one_big_file(boundary: str) -> tuple[list[bytes], int]:
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"big.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    chunk = b"\0" * (1024 * 1024)
    filler = BIG - len(head) - len(tail)
    parts = [head] + [chunk] * (filler // len(chunk)) + [b"\0" * (filler % len(chunk)), tail]
    return parts, BIG


def many_fields(boundary: str) -> tuple[list[bytes], int]:
    field = f"--{boundary}\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n".encode()
    count = 20 * 1024 * 1024 // len(field)
    block = field * 1000
    parts = [block] * (count // 1000) + [f"--{boundary}--\r\n".encode()]
    return parts, sum(map(len, parts))


def probe(url: str, stop: threading.Event, waits: list[float]) -> None:
    while not stop.is_set():
        started = time.monotonic()
        try:
            urllib.request.urlopen(f"{url}/accounts/login/", timeout=TIMEOUT).read()
        except OSError:
            pass
        waits.append(time.monotonic() - started)
        time.sleep(0.02)


def measure(name: str, server_class) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {"DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3", "REDIS_URL": "", "WEB_CONCURRENCY": "1",
               "DJANGO_DEBUG": "1", "API_ANON_RATE_LIMIT_PER_MINUTE": "1000000"}
        with server_class(env) as server:
            server.manage("migrate", "--no-input")
            urllib.request.urlopen(f"{server.url}/accounts/login/", timeout=TIMEOUT).read()  # warm
            pid = serving_pid(server)
            before = rss_mib(pid)
            started = time.monotonic()
            status, sent = post_streamed(server.port, *one_big_file("b"), boundary="b")
            print(f"{name}: 100 MB token-less multipart: {status!r} after {sent / 2**20:.1f} MB sent, "
                  f"{time.monotonic() - started:.2f} s; RSS {before:.0f} MB -> {rss_mib(pid):.0f} MB")

            stop, waits = threading.Event(), []
            prober = threading.Thread(target=probe, args=(server.url, stop, waits))
            prober.start()
            time.sleep(0.5)
            cpu_before, started = cpu_seconds(pid), time.monotonic()
            status, sent = post_streamed(server.port, *many_fields("m"), boundary="m")
            elapsed, cpu = time.monotonic() - started, cpu_seconds(pid) - cpu_before
            time.sleep(0.5)
            stop.set()
            prober.join()
            print(f"{name}: 20 MB of ~450k fields, token-less: {status!r} after {sent / 2**20:.1f} MB sent, "
                  f"{elapsed:.2f} s; server CPU {cpu:.2f} s; longest probe wait {max(waits) * 1000:.0f} ms "
                  f"({len(waits)} probes); RSS now {rss_mib(pid):.0f} MB")


if __name__ == "__main__":
    for name in SERVERS:
        measure(name, {"daphne": DaphneServer, "procfile": ProcfileServer}[name])
