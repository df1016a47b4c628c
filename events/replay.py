"""What a board viewer is sent: every frame once, in seq order, from where it says it stopped.

The consumer joins the project's group before it reads the log, and handles one message at a time:
live frames arriving while the replay is read wait in its channel, and are then passed through
`follow`, which drops those the replay already sent. A live frame further ahead than the next seq
(the viewer's channel overflowed, or two processes delivered out of order) is preceded by the
missing ones read from the log; if the log no longer has them, the viewer is told to reload.
"""

import re
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from core.events import Event

from . import selectors

# A viewer further behind than this reloads the board: cheaper than replaying a day of frames.
REPLAY_MAX = 1000


SEQ = re.compile(r"[0-9]{1,18}")


class InvalidSince(ValueError):
    pass


def since_of(query_string: bytes) -> int | None:
    """`?since=SEQ` of the handshake: None when absent; anything but a whole number of 1 to 18 digits (as
    an id, core.api.fields) is refused, before Python would read thousands of digits (or refuse them)."""
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("since")
    if values is None:
        return None
    if len(values) != 1 or SEQ.fullmatch(values[0]) is None:
        raise InvalidSince(values)
    return int(values[0])


def resync_frame(project_id: int, latest: int) -> dict:
    return {"event": Event.RESYNC_REQUIRED, "project_id": project_id, "seq": latest}


@database_sync_to_async
def _frames_since(project_id: int, since: int) -> tuple[list[dict] | None, int]:
    """The kept frames after `since` up to the latest committed one, or None if some are gone; and that latest.

    The latest seq is read first: every frame up to it is committed, so the log holds them all unless pruned.
    """
    latest = selectors.latest_seq(project_id=project_id)
    if since > latest or latest - since > REPLAY_MAX:
        return None, latest
    frames = selectors.frames_between(project_id=project_id, after=since, upto=latest + 1)
    return (frames if len(frames) == latest - since else None), latest


class FrameCursor:
    """The last seq one viewer was sent (None until its first frame when it connected without `since`)."""

    def __init__(self, project_id: int):
        self.project_id = project_id
        self.last_seq: int | None = None

    async def resume(self, since: int) -> list[dict]:
        """The frames after `since`, or one resync_required frame when they cannot all be sent."""
        frames, latest = await _frames_since(self.project_id, since)
        if frames is None:
            self.last_seq = latest
            return [resync_frame(self.project_id, latest)]
        self.last_seq = latest
        return frames

    async def follow(self, frames: list[dict]) -> list[dict]:
        """Live frames made fit to send: already sent ones dropped, missing ones filled in from the log."""
        out = []
        for frame in frames:
            seq = frame["seq"]
            if self.last_seq is not None and seq <= self.last_seq:
                continue
            if self.last_seq is not None and seq > self.last_seq + 1:
                missing, latest = await _frames_since(self.project_id, self.last_seq)
                if missing is None:
                    out.append(resync_frame(self.project_id, latest))
                    self.last_seq = max(latest, seq)
                    continue
                out.extend(frame for frame in missing if frame["seq"] < seq)
            out.append(frame)
            self.last_seq = seq
        return out
