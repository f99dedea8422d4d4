"""A Redis connection whose replies may be read later than their requests were sent.

An order number costs one Redis round trip. ``save()`` sends the reservation as soon as
it starts (the model's ``pre_save`` signal, unless ``SNOWID_ORDER_SEND_AHEAD`` is off)
and reads the reply only when the INSERT is compiled, so the round trip overlaps
Django's own work before the INSERT instead of adding to it.

Redis answers the commands of one connection in the order they were sent. A channel
keeps its sent-but-unread requests in that order, and reading the reply of one request
first reads (and keeps) the replies of every request sent before it. So a reply never
goes to the wrong request, even when requests interleave (a save inside a ``pre_save``
receiver) or one is never read (a save that failed before its INSERT: that number is a
gap, never a duplicate).
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any

import redis

__all__ = ["Channel", "Request"]


class Request:
    """One command sent on a channel; its reply (or error) once read."""

    __slots__ = ("channel", "done", "error", "reply")

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.done = False
        self.reply: Any = None
        self.error: BaseException | None = None

    def fail(self, error: BaseException) -> None:
        self.error, self.done = error, True

    def result(self) -> Any:
        """The reply; raises the error Redis (or the connection) gave instead."""
        if not self.done:
            self.channel.read_until(self)
        if self.error is not None:
            raise self.error
        return self.reply


class Channel:
    """One connection of one thread in one process, with its unread requests in order."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.pid = os.getpid()
        self._unread: deque[Request] = deque()

    def pack(self, *args: Any) -> Any:
        """``args`` as a command ready for :meth:`send` (it may be sent many times)."""
        return self.connection.pack_command(*args)

    def send(self, packed: Any) -> Request:
        """Send a packed command now; read its reply later with ``Request.result()``.

        A connection that fails while sending fails the request (and every unread one)
        instead of raising here: the caller decides when to retry.
        """
        request = Request(self)
        try:
            # A health check would read a reply of its own: only with nothing unread.
            self.connection.send_packed_command(packed, check_health=not self._unread)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            self._broken(exc)
            request.fail(exc)
            return request
        except BaseException as exc:  # interrupted: redis-py closed the socket
            self._broken(_interrupted(exc))
            raise
        self._unread.append(request)
        return request

    def read_until(self, request: Request) -> None:
        while not request.done:
            if not self._unread:  # cannot happen: an unread request is queued until read
                request.fail(RuntimeError("Redis request lost from its channel"))
                return
            head = self._unread.popleft()
            try:
                head.reply = self.connection.read_response()
                head.done = True
            except redis.exceptions.ResponseError as exc:
                head.fail(exc)  # this request's own error (NOSCRIPT, WRONGTYPE)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                head.fail(exc)
                self._broken(exc)
            except BaseException as exc:  # interrupted mid-reply: redis-py closed the socket
                head.fail(_interrupted(exc))
                self._broken(_interrupted(exc))
                raise

    def _broken(self, exc: BaseException) -> None:
        # Unread replies are lost with the socket: their requests fail alike.
        self.connection.disconnect()
        while self._unread:
            self._unread.popleft().fail(exc)


def _interrupted(exc: BaseException) -> redis.exceptions.ConnectionError:
    return redis.exceptions.ConnectionError(f"Reading from Redis was interrupted: {exc!r}")
