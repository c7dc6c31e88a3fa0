"""What a WebSocket server sends, read back for the key-hygiene scan (tests/support/key_hygiene.py).

flask-sock writes frames straight to the server's socket, past WSGI, so the scanning middleware
hands it a `WebSocketTap` in place of that socket: the tap sends as the socket would and feeds a
copy to a `FrameReader`, which skips the HTTP 101 response, reassembles fragmented messages,
unmasks and inflates (permessage-deflate) them, and passes each message to the watch.
"""
import threading
import zlib


class WebSocketTap:
    """Stands in for the server's socket: everything flask-sock sends passes a frame reader
    whose decoded messages (inflated when permessage-deflate is on) are scanned."""

    def __init__(self, sock, watch, where: str):
        self._sock = sock
        self._reader = FrameReader(watch, where)
        self._lock = threading.Lock()

    @property
    def __class__(self):
        """Passes `isinstance(tap, socket.socket)`, so the app treats the tap as its socket."""
        return type(self._sock)

    def send(self, data, *args) -> int:
        """Scans the bytes, then sends them like the socket (scanned first, so a test that has
        seen them arrive can rely on the scan being done)."""
        with self._lock:
            self._reader.feed(bytes(data))
            return self._sock.send(data, *args)

    def sendall(self, data, *args) -> None:
        """Scans, then sends everything."""
        with self._lock:
            self._reader.feed(bytes(data))
            self._sock.sendall(data, *args)

    def __getattr__(self, name):
        return getattr(self._sock, name)


class FrameReader:
    """Reads what a WebSocket server sends: the HTTP 101 response, then frames."""

    def __init__(self, watch, where: str):
        self._watch = watch
        self._where = where
        self._buffer = b""
        self._handshake = True
        self._parts: list[bytes] = []
        self._compressed = False
        self._inflate = zlib.decompressobj(-15)
        self._broken = False

    def feed(self, data: bytes) -> None:
        """Takes the next bytes from the wire; scans each complete message."""
        if self._broken:
            return
        self._buffer += data
        try:
            if self._handshake:
                head, sep, rest = self._buffer.partition(b"\r\n\r\n")
                if not sep:
                    return
                self._watch.scan(f"{self._where}: handshake response", head)
                self._buffer, self._handshake = rest, False
            while self._next_frame():
                pass
        except (ValueError, zlib.error) as err:
            self._broken = True
            self._watch.problem(f"{self._where}: frames could not be read for scanning: {err}")

    def _next_frame(self) -> bool:
        buf = self._buffer
        if len(buf) < 2:
            return False
        first, second = buf[0], buf[1]
        length, pos = second & 0x7F, 2
        if length >= 126:
            size = 2 if length == 126 else 8
            if len(buf) < pos + size:
                return False
            length, pos = int.from_bytes(buf[pos:pos + size], "big"), pos + size
        mask = b""
        if second & 0x80:
            mask, pos = buf[pos:pos + 4], pos + 4
        if len(buf) < pos + length:
            return False
        payload = buf[pos:pos + length]
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self._buffer = buf[pos + length:]
        self._frame(first & 0x80, first & 0x40, first & 0x0F, payload)
        return True

    def _frame(self, fin: int, rsv1: int, opcode: int, payload: bytes) -> None:
        if opcode >= 0x8:
            self._watch.scan(f"{self._where}: control frame", payload)
            return
        if opcode in (0x1, 0x2):
            self._parts, self._compressed = [], bool(rsv1)
        elif opcode != 0x0:
            raise ValueError(f"unknown opcode {opcode}")
        self._parts.append(payload)
        if fin:
            message = b"".join(self._parts)
            if self._compressed:
                message = self._inflate.decompress(message + b"\x00\x00\xff\xff")
            self._watch.scan(f"{self._where}: frame", message)
            self._parts = []
