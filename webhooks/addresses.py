"""Where a webhook may send (SSRF rules): the URL's form, and which addresses its host may stand for.

Only http and https, no credentials in the URL, and every address the host stands for must be public:
loopback, private, link-local, site-local (fec0::/10, deprecated but still routed inside some networks),
multicast, reserved and unspecified addresses are refused, IPv4 and IPv6 alike, including IPv4 addresses carried inside IPv6 ones (mapped, 6to4, Teredo, NAT64). A host or
address listed in WEBHOOK_ALLOWED_PRIVATE_HOSTS is exempt. The sender resolves the host itself at each
attempt, checks every address and connects to one it checked (webhooks/delivery.py): a name that
changes its answer between the check and the connection (DNS rebinding) cannot redirect it.
"""

import asyncio
import ipaddress
import re
import socket
from concurrent.futures import Executor
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# The names every resolver answers with a loopback address, whatever DNS says.
LOOPBACK_NAMES = ("localhost", "localhost.localdomain")
# What a request line carries as it is; anything else in a URL's path or query (é) goes percent-encoded (UTF-8).
PRINTABLE_ASCII = "".join(chr(code) for code in range(0x21, 0x7F))
# One to four parts, each decimal, octal (a leading 0) or hex (0x): what inet_aton() reads as an IPv4 address.
NUMERIC_IPV4 = re.compile(r"(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)


class AddressRefused(Exception):
    """The URL may not be sent to; the message says why, naming `url`."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # ASCII (IDNA), without brackets
    port: int
    path: str  # path and query, as the request line carries them (ASCII)
    host_header: str


def target_of(url: str) -> Target:
    """The URL's parts, or AddressRefused when its form is not one a webhook may have."""
    if any(character.isspace() or ord(character) < 0x20 or ord(character) == 0x7F for character in url):
        raise AddressRefused("url must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError:  # an unbalanced bracket ("http://[::1")
        raise AddressRefused("url has an invalid host or port") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise AddressRefused("url must start with http:// or https://")
    if "@" in parts.netloc:
        raise AddressRefused("url must not contain credentials")
    if parts.fragment or url.endswith("#"):
        raise AddressRefused("url must not have a fragment")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
        host = (parts.hostname or "").encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        raise AddressRefused("url has an invalid host or port") from None
    if not host:
        raise AddressRefused("url must name a host")
    shown_host = f"[{host}]" if ":" in host else host
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme=scheme, host=host, port=port, path=quote(path, safe=PRINTABLE_ASCII),
                  host_header=shown_host if parts.port is None else f"{shown_host}:{port}")


def is_public(address: IPAddress) -> bool:
    """Whether the address, and any IPv4 address carried inside it, is globally routable unicast."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
        if address in NAT64:
            carried.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if not all(is_public(inner) for inner in carried if inner is not None):
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:  # Python counts fec0::/10 global
        return False
    return address.is_global and not (address.is_multicast or address.is_private or address.is_reserved
                                      or address.is_loopback or address.is_link_local or address.is_unspecified)


def allowed_private(host: str, address: IPAddress | None = None) -> bool:
    allowed = {entry.lower().strip("[]") for entry in settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS}
    return host.lower() in allowed or (address is not None and str(address) in allowed)


def check(host: str, address: IPAddress) -> None:
    if is_public(address) or allowed_private(host, address):
        return
    if literal_address(host) is not None:
        raise AddressRefused(f"url's host {host} is not a public address")
    raise AddressRefused(f"url's host {host} stands for {address}, which is not a public address")


def literal_address(host: str) -> IPAddress | None:
    """The address the host is written as: in the standard notation, or in a numeric form the system's resolver
    reads as an IPv4 address (127.1, 2130706433, 0x7f.1, 0177.0.0.1), which a name check would let through."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if NUMERIC_IPV4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def is_loopback_name(host: str) -> bool:
    name = host.rstrip(".").lower()
    return name in LOOPBACK_NAMES or name.endswith(".localhost")


async def resolve(target: Target, resolver: Executor) -> list[IPAddress]:
    """Every address of the target's host, each checked; AddressRefused if one is refused or none is found.
    The lookup runs on `resolver`'s threads (getaddrinfo() cannot be given a timeout): the caller's deadline
    stops the wait, and the thread is given back at the system resolver's own timeout."""
    literal = literal_address(target.host)
    if literal is not None:
        check(target.host, literal)
        return [literal]
    if is_loopback_name(target.host):
        if allowed_private(target.host):
            return [ipaddress.ip_address("127.0.0.1")]
        raise AddressRefused(f"url's host {target.host} is a loopback name")
    lookup = asyncio.get_running_loop().run_in_executor(
        resolver, lambda: socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM))
    try:
        answers = await lookup
    except OSError:
        raise AddressRefused(f"url's host {target.host} does not resolve") from None
    # An IPv6 answer may carry a zone ("fe80::1%eth0"): the address is what comes before it.
    addresses = list(dict.fromkeys(ipaddress.ip_address(answer[4][0].split("%")[0]) for answer in answers))
    for address in addresses:
        check(target.host, address)
    return addresses


def registration_problem(url: str) -> str | None:
    """Why a webhook may not be registered with this URL, or None: its form, and the address it names when
    its host is an address or a loopback name. A name is not looked up here (no request waits for DNS):
    each attempt resolves it and refuses what it stands for."""
    try:
        target = target_of(url)
        literal = literal_address(target.host)
        if literal is not None:
            check(target.host, literal)
        elif is_loopback_name(target.host) and not allowed_private(target.host):
            raise AddressRefused(f"url's host {target.host} is a loopback name")
    except AddressRefused as refused:
        return str(refused)
    return None
