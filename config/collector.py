"""The garbage collector as a server process runs it (config/asgi.py, once the application is loaded);
the benchmarks that time views in one process set it up the same way."""

import gc


def tune_for_serving() -> None:
    # Everything loaded so far lives as long as the process: keep it out of the garbage collector's
    # full scans, which otherwise stall requests that build many objects (big boards).
    gc.freeze()
    # A young collection runs every 700 allocations by default, and every tenth one also scans the middle
    # generation: relaying one frame to the hundreds of viewers of a process ran them over and over (about
    # 5 ms for each of the middle one), and the full scans they lead to walked every open socket's objects
    # (25-130 ms each). Every 10,000 allocations instead: about 15% less server CPU per frame
    # (bench/ws_fanout.py), and a 20,000-ticket board costs 190 ms of CPU instead of 288.
    gc.set_threshold(10_000, 10, 10)
