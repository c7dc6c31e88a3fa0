"""WebSocket routes (flask-sock); `sock` is bound to the app in `create_app`."""
from flask_sock import Sock

sock = Sock()
