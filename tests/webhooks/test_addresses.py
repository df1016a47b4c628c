"""The address rules (SSRF) and the TLS checks of the original host."""

import asyncio
import datetime
import ipaddress
import socket
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from webhooks import delivery, sender
from webhooks.addresses import is_public, resolve, target_of

from .conftest import post_once
from .receivers import Receiver


@pytest.mark.parametrize(("address", "public"), [
    ("93.184.215.14", True), ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", True), ("1.1.1.1", True),
    ("127.0.0.1", False), ("127.8.9.10", False), ("10.0.0.1", False), ("172.16.5.4", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("255.255.255.255", False),
    ("224.0.0.251", False), ("239.255.255.250", False), ("240.0.0.1", False), ("192.0.2.1", False),
    ("198.18.0.1", False), ("::1", False), ("::", False), ("fe80::1", False), ("fc00::1", False), ("fd12::1", False),
    ("ff02::1", False), ("2001:db8::1", False), ("fec0::1", False), ("feff:1::2", False),
    # IPv4 inside IPv6: mapped addresses are refused whatever they carry (no resolver should answer one).
    ("::ffff:127.0.0.1", False), ("::ffff:10.1.1.1", False), ("::ffff:93.184.215.14", False),
    ("2002:7f00:1::", False), ("2002:0a00:0001::", False),  # 6to4 carrying 127.0.0.1, 10.0.0.1
    ("64:ff9b::a9fe:a9fe", False), ("64:ff9b::7f00:1", False),  # NAT64 of 169.254.169.254, 127.0.0.1
])
def test_only_public_unicast_addresses_are_public(address, public):
    assert is_public(ipaddress.ip_address(address)) is public


def certificate_authority():
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    return key, certificate


def server_context(tmp_path, authority, host: str) -> ssl.SSLContext:
    """A TLS server context whose certificate, signed by `authority`, names `host`."""
    ca_key, ca_certificate = authority
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
                   .issuer_name(ca_certificate.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
                   .sign(ca_key, hashes.SHA256()))
    (tmp_path / "server.pem").write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.pem")
    return context


@pytest.fixture
def tls_receiver(tmp_path, settings, monkeypatch):
    """`with tls_receiver(name) as (receiver, url):` an https receiver on 127.0.0.1 whose certificate names
    `name`, reached as https://hooks.example.test:PORT/hooks. The name stands for 127.0.0.1, and the sender
    trusts the receiver's certificate authority, as it trusts the system's in production."""
    settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    resolve = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *args, **kwargs: resolve(
        "127.0.0.1" if host == "hooks.example.test" else host, port, *args, **kwargs))
    authority = certificate_authority()
    trusted = ssl.create_default_context(cadata=authority[1].public_bytes(serialization.Encoding.PEM).decode())
    monkeypatch.setattr(delivery, "_tls_context", lambda: trusted)

    @contextmanager
    def start(name: str):
        with Receiver(tls=server_context(tmp_path, authority, name)) as receiver:
            yield receiver, receiver.url.replace("127.0.0.1", "hooks.example.test")

    return start


def test_https_is_sent_to_the_checked_address_as_the_url_s_host(tls_receiver):
    with tls_receiver("hooks.example.test") as (receiver, url):
        exchange = post_once(url, body=b'{"event": "webhook.ping"}', headers={"webhook-id": "msg_1"}, timeout=5)

        assert (exchange.status, exchange.failure) == (200, None)
        [received] = receiver.wait_for(1)
        assert (receiver.server_names, received.headers["host"]) == (["hooks.example.test"], url.split("/")[2])


def test_a_certificate_for_another_host_is_refused(tls_receiver):
    with tls_receiver("elsewhere.example.test") as (receiver, url):
        exchange = post_once(url, body=b"{}", headers={}, timeout=5)

        assert (exchange.status, exchange.failure) == (None, "connection")
        assert exchange.error.startswith("TLS failed: CERTIFICATE_VERIFY_FAILED")
        assert receiver.received == []


def test_an_untrusted_certificate_is_refused(tmp_path, settings):
    settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    with Receiver(tls=server_context(tmp_path, certificate_authority(), "127.0.0.1")) as receiver:
        exchange = post_once(receiver.url, body=b"{}", headers={}, timeout=5)
        assert exchange.error.startswith("TLS failed: CERTIFICATE_VERIFY_FAILED")
        assert receiver.received == []


def test_lookups_stuck_on_a_silent_name_server_leave_other_names_theirs(settings, monkeypatch):
    """An endpoint whose name server never answers holds as many lookups as it holds attempts
    (WEBHOOK_ENDPOINT_CONCURRENCY), each until the system resolver gives up, though its attempt ends at the
    deadline; the sender's lookups have more threads than that, so another endpoint's name still resolves."""
    assert sender.RESOLVER_THREADS > settings.WEBHOOK_ENDPOINT_CONCURRENCY
    answered, getaddrinfo = threading.Event(), socket.getaddrinfo

    def lookup(host, port, *args, **kwargs):
        if host == "silent.example.test":
            answered.wait(30)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return getaddrinfo("127.0.0.1" if host == "hooks.example.test" else host, port, *args, **kwargs)

    async def lookups(resolver) -> list:
        for _ in range(settings.WEBHOOK_ENDPOINT_CONCURRENCY):
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await resolve(target_of("https://silent.example.test/hooks"), resolver)
        async with asyncio.timeout(3):
            return await resolve(target_of("https://hooks.example.test/hooks"), resolver)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    resolver = ThreadPoolExecutor(max_workers=sender.RESOLVER_THREADS)
    try:
        assert asyncio.run(lookups(resolver)) == [ipaddress.ip_address("127.0.0.1")]
    finally:
        answered.set()
        resolver.shutdown()
