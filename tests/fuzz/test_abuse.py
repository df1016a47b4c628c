"""Issue 27's attack on the running service, replayed: the Procfile's server (two workers, PostgreSQL,
Redis, static files collected as in production), each abuse that got through then, and what the service
answers now. Clients that count per address come from an address of their own (the loopback network
is 127.0.0.0/8), so that counts of one test, or of one run, are not another's."""

import asyncio
import http.client
import json
import os
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import pytest
import websockets
from django.conf import settings
from django.core.files.base import ContentFile
from django.test import Client
from websockets.exceptions import ConnectionClosed, InvalidStatus

from accounts.consumers import BAD_FRAME
from accounts.services import issue_token
from tests.attachments.test_uploads import zip_of
from tests.factories import PASSWORD, ArticleAttachmentFactory, ArticleFactory, FolderFactory
from tests.realtime.conftest import SEVERAL_PROCESSES
from tests.realtime.servers import served_database_url
from tests.security.procfile import ProcfileServer

pytestmark = SEVERAL_PROCESSES


@pytest.fixture(scope="module")
def server(tmp_path_factory, django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        database_url = served_database_url()
    media = tmp_path_factory.mktemp("media")
    env = {"DATABASE_URL": database_url, "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "2",
           "MEDIA_ROOT": str(media), "STATIC_ROOT": str(tmp_path_factory.mktemp("static"))}
    server = ProcfileServer(env)
    server.manage("collectstatic", "--no-input")
    with server:
        server.media = media
        yield server


@pytest.fixture(autouse=True)
def shared_media(server, settings):
    """The files the test stores are where the server looks for them."""
    settings.MEDIA_ROOT = server.media


def an_address() -> str:
    """A loopback address of this test's own."""
    return f"127.{secrets.randbelow(250) + 2}.{secrets.randbelow(256)}.{secrets.randbelow(250) + 2}"


def call(server, method: str, path: str, *, body: bytes | None = None, headers: dict | None = None,
         source: str = "127.0.0.1") -> tuple[int, dict, bytes]:
    """One request on a connection of its own, `path` sent as it is: status, headers (lower-case), body."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30, source_address=(source, 0))
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in {"Content-Length": str(len(body or b"")), **(headers or {})}.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, {name.lower(): value for name, value in response.getheaders()}, response.read()
    finally:
        connection.close()


def api(server, method: str, path: str, token: str, payload: dict | None = None) -> tuple[int, dict]:
    status, _, body = call(server, method, path, body=json.dumps(payload).encode() if payload is not None else None,
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return status, json.loads(body)


def early_in_a_minute() -> None:
    """Wait, if need be, for the start of the next rate-limit window, so that a burst fits in one."""
    while time.time() % 60 > 50:
        time.sleep(0.2)


def login_post(server, username: str, password: str, source: str) -> tuple[int, dict, bytes]:
    csrf = secrets.token_hex(16)  # Django takes its 32-character secret unmasked
    form = urlencode({"csrfmiddlewaretoken": csrf, "username": username, "password": password}).encode()
    return call(server, "POST", "/accounts/login/", body=form, source=source, headers={
        "Cookie": f"{settings.CSRF_COOKIE_NAME}={csrf}",
        "Content-Type": "application/x-www-form-urlencoded"})


# ---- 1. the login flood

def test_a_login_flood_from_one_address_is_refused_before_any_password_is_checked(server):
    address = an_address()
    early_in_a_minute()
    with ThreadPoolExecutor(max_workers=8) as clients:
        answers = list(clients.map(lambda index: login_post(server, f"nobody{index}", "guess", address), range(26)))
    over_the_limit = [answer for answer in answers if b"Too many login attempts from your address" in answer[2]]
    # The 20 within the limit were checked (200), or found no turn to hash in time (429, accounts/hashers.py).
    within = [answer for answer in answers if answer not in over_the_limit]
    assert (len(over_the_limit), {status for status, _, _ in over_the_limit}) == (6, {429})
    assert all(status == 200 or b"Too many logins are being checked" in body for status, _, body in within)
    _, headers, _ = over_the_limit[0]
    assert 1 <= int(headers["retry-after"]) <= 60
    assert login_post(server, "nobody", "guess", an_address())[0] == 200  # another address


def test_a_password_spray_locks_its_address_out(server):
    server.manage("createuser", "ada", "--password", PASSWORD)  # hashed as the server hashes
    address = an_address()
    for index in range(10):
        login_post(server, f"user{index}@spray", "Spring2026!", address)
    status, _, body = login_post(server, "ada", PASSWORD, address)
    assert (status, b"Too many failed login attempts" in body) == (200, True)
    assert login_post(server, "ada", PASSWORD, an_address())[0] == 302


# ---- 3. copies of an article with large attachments

def peak_memory(server) -> int:
    """The workers' peak resident memory, in bytes, summed."""
    return sum(int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                        if line.startswith("VmHWM:")).split()[1]) * 1024 for pid in server.worker_pids())


def test_parallel_copies_of_an_article_with_large_files_stay_in_bounded_memory(server, project, manager):
    article = ArticleFactory(project=project)
    size = 8 * 1024 * 1024
    for index in range(3):
        ArticleAttachmentFactory(article=article, file=ContentFile(b"x" * size, name=f"big{index}.txt"),
                                 filesize=size)
    token = issue_token(user=manager)[1]
    path = f"/api/v1/projects/{project.id}/docs/articles/{article.id}/copy"
    api(server, "POST", path, token)  # each worker's first copy: code paths and pools warmed
    api(server, "POST", path, token)
    before = peak_memory(server)
    with ThreadPoolExecutor(max_workers=3) as copies:
        statuses = [status for status, _ in copies.map(lambda _: api(server, "POST", path, token), range(3))]
    assert statuses == [201] * 3
    assert peak_memory(server) - before < 20 * 1024 * 1024  # 72 MB when each copy read its files whole


# ---- 5. a docs tree deeper than the stack

def test_a_docs_tree_78_deep_renders_and_no_folder_goes_deeper_than_32(server, project, manager):
    chain = []
    for level in range(78):
        chain.append(FolderFactory(project=project, parent=chain[-1] if chain else None, title=f"Level {level + 1}"))
    browser = Client()
    browser.force_login(manager)
    status, _, body = call(server, "GET", f"/projects/{project.id}/docs/", headers={
        "Cookie": f"{settings.SESSION_COOKIE_NAME}={browser.cookies['sessionid'].value}"})
    assert status == 200 and b"Level 78" in body
    token = issue_token(user=manager)[1]
    status, answer = api(server, "POST", f"/api/v1/projects/{project.id}/docs/folders", token,
                         {"title": "Deeper", "parent_id": chain[31].id})
    assert (status, answer) == (422, {
        "code": "validation_failed", "error": "parent_id: folders nest at most 32 levels deep", "field": "parent_id"})


# ---- 7, 11. inputs the reference did not describe, and paths it did not reach

@pytest.mark.parametrize("to", ["9999-12-31", "0001-01-01"])
def test_time_reports_at_the_edges_of_the_calendar_are_422(server, project, manager, to):
    status, answer = api(server, "GET", f"/api/v1/projects/{project.id}/time-report?to={to}",
                         issue_token(user=manager)[1])
    assert (status, answer["field"]) == (422, "to")


def test_a_number_where_the_reference_declares_a_string_is_422(server, manager):
    status, answer = api(server, "POST", "/api/v1/projects", issue_token(user=manager)[1], {"name": 0})
    assert (status, answer) == (422, {
        "code": "validation_failed", "error": "name: Not a valid string.", "field": "name"})


def test_doubled_slashes_before_api_answer_json(server):
    status, headers, body = call(server, "GET", "//api//v1//projects")
    assert (status, headers["content-type"], json.loads(body)) == (404, "application/json", {
        "code": "not_found", "error": "not found"})


def test_a_zip_of_120000_members_is_refused(server, project, manager):
    article = ArticleFactory(project=project)
    body = (b"--x\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"many.zip\"\r\n"
            b"Content-Type: application/zip\r\n\r\n" + zip_of(120_000) + b"\r\n--x--\r\n")
    status, _, answer = call(server, "POST", f"/api/v1/projects/{project.id}/docs/articles/{article.id}/attachments",
                             body=body, headers={"Authorization": f"Bearer {issue_token(user=manager)[1]}",
                                                 "Content-Type": "multipart/form-data; boundary=x"})
    assert (status, json.loads(answer)) == (422, {"code": "validation_failed",
        "error": "files: many.zip: is an archive of more than 10,000 members", "field": "files"})


# ---- 8. websockets

def board(server, project) -> str:
    return f"{server.ws_url}/ws/v1/projects/{project.id}/board/"


def test_a_since_of_5000_digits_is_refused_at_the_handshake(server, project, manager):
    token = issue_token(user=manager)[1]

    async def handshake():
        with pytest.raises(InvalidStatus) as refused:
            await websockets.connect(f"{board(server, project)}?since={'9' * 5000}", open_timeout=10,
                                     additional_headers={"Authorization": f"Bearer {token}"})
        return refused.value.response.status_code

    assert asyncio.run(handshake()) == 403


def test_json_nested_a_thousand_deep_closes_the_socket_with_4400(server, project, manager):
    token = issue_token(user=manager)[1]

    async def nested():
        async with websockets.connect(board(server, project), open_timeout=10,
                                      additional_headers={"Authorization": f"Bearer {token}"}) as socket:
            await socket.send("[" * 1000 + "]" * 1000)
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(socket.recv(), timeout=5)
            return closed.value.rcvd.code

    assert asyncio.run(nested()) == BAD_FRAME


def test_random_token_handshakes_stop_at_the_address_limit(server, project):
    address = an_address()

    async def handshake() -> int:
        try:
            await websockets.connect(board(server, project), open_timeout=10, local_addr=(address, 0),
                                     additional_headers={"Authorization": f"Bearer {secrets.token_hex(32)}"})
        except InvalidStatus as refused:
            return refused.response.status_code
        raise AssertionError("a random token opened a socket")

    async def flood() -> list[int]:
        return [await handshake() for _ in range(125)]

    early_in_a_minute()
    statuses = asyncio.run(flood())
    assert statuses == [403] * 120 + [429] * 5
