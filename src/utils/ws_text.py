"""Text frames to a WebSocket client, framed here instead of by wsproto (RFC 6455 §5.2).

A chat reply is a dozen small text frames. simple-websocket frames each one through wsproto
(an event object, its state machine, the extension hooks) and hands the result to one `send`
call, which may write only part of a large frame; framing an unmasked, unfragmented text frame
takes a few bytes of header, so the chat socket sends its frames through `TextFrames`: built
here and written whole by `send` calls (gevent's `sendall` asks the kernel for the socket's
buffer size before every write on a socket with a timeout: a system call more per frame).
wsproto keeps everything else (the handshake, reading, pings, the close handshake). A frame sent this way never sets RSV1, so where the client
negotiated permessage-deflate it is an uncompressed message, which RFC 7692 §6 allows.
"""
from __future__ import annotations

import struct

from simple_websocket import ConnectionClosed, Server

TEXT_FIN = 0x81  # FIN + opcode 1 (text)


def text_frame(text: str) -> bytes:
    """One unmasked, final text frame holding `text` (UTF-8; a server's frames are unmasked)."""
    data = text.encode("utf-8")
    size = len(data)
    if size < 126:
        return bytes((TEXT_FIN, size)) + data
    if size < 1 << 16:
        return struct.pack("!BBH", TEXT_FIN, 126, size) + data
    return struct.pack("!BBQ", TEXT_FIN, 127, size) + data


class TextFrames:
    """A simple-websocket `Server` whose text frames are framed by `text_frame` and written
    whole; receiving and closing are the server's own."""

    def __init__(self, ws: Server):
        assert ws.sock is not None  # a server made from a request always has its socket
        self._ws = ws
        self.sock = ws.sock

    def receive(self) -> str | bytes | None:
        """The next message from the client (simple-websocket's `receive`)."""
        return self._ws.receive()

    def send(self, data: str) -> None:
        """Sends `data` as one text frame; ConnectionClosed once the connection is closed."""
        ws = self._ws
        if not ws.connected:
            raise ConnectionClosed(ws.close_reason, ws.close_message)
        frame = text_frame(data)
        sent = self.sock.send(frame)
        while sent < len(frame):  # a large frame may leave in parts; most leave in one
            sent += self.sock.send(memoryview(frame)[sent:])
