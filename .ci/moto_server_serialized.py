"""moto_server with its DynamoDB requests handled one at a time.

moto 5.2.1's server answers requests on parallel threads, and its TransactWriteItems deep-copies
each table it touches before applying the transaction, without a lock, then restores that copy when
the transaction is cancelled. Under concurrent writes (the soak: many workers, a transaction per
batch child) the copy raises "dictionary changed size during iteration" (answered as an HTML 500
the SDK cannot parse), and a cancelled transaction can put back a table state that undoes other
clients' writes made in between. DynamoDB itself applies each request atomically, so serializing
the emulator's DynamoDB requests makes it closer to DynamoDB, not more lenient. SQS requests
(long polls included) stay parallel.

Usage, as moto_server: python .ci/moto_server_serialized.py -H 127.0.0.1 -p 5000
"""

import sys
import threading

from moto.dynamodb.responses import DynamoHandler
from moto.server import main

_dynamodb_lock = threading.Lock()
_call_action = DynamoHandler.call_action


def _serialized_call_action(self):  # type: ignore[no-untyped-def]
    with _dynamodb_lock:
        return _call_action(self)


DynamoHandler.call_action = _serialized_call_action  # type: ignore[method-assign]

if __name__ == "__main__":
    main(sys.argv[1:])
