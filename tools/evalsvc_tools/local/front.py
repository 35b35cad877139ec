"""The embedded store's front door (store.py): WSGI middleware in front of moto that lets one
request in at a time (moto's tables are not safe under concurrent writes) and keeps every
successful write in the journal (journal.py) before its response leaves; a write that cannot be
journaled is undone and answered 503 (ServiceUnavailable)."""

from __future__ import annotations

import io
import json
import logging
import threading
from typing import Any

from moto.moto_server.werkzeug_app import create_backend_app

from evalsvc_tools.local import fastpath
from evalsvc_tools.local.item_images import image_of, set_item
from evalsvc_tools.local.journal import Journal, JournalFailed, binary_values

ITEM_WRITES = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
)
TABLE_WRITES = frozenset({"CreateTable", "DeleteTable", "UpdateTable", "UpdateTimeToLive"})
log = logging.getLogger("evalsvc.local")


def _error(start_response: Any, status: str, kind: str, message: str) -> list[bytes]:
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{kind}", "message": message})
    start_response(status, [("Content-Type", "application/x-amz-json-1.0")])
    return [body.encode()]


def _unavailable(start_response: Any, exc: JournalFailed) -> list[bytes]:
    return _error(start_response, "503 Service Unavailable", "ServiceUnavailable", str(exc))


class Front:
    """WSGI middleware in front of moto. One request at a time (moto's tables are not safe under
    concurrent writes); a successful item write leaves the images of the items it touched in the
    journal, and no response leaves before the journal holds every write applied before it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        # moto's dispatcher finds the service of every request by looking through its modules;
        # the two services the store serves go to their own apps directly.
        self.apps = {
            "DynamoDB": create_backend_app("dynamodb"),
            "AmazonSQS": create_backend_app("sqs"),
        }
        self.lock = threading.Lock()
        self.journal: Journal | None = None
        self.backend: Any = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        service, _, operation = target.partition(".")
        journal = self.journal
        app = self.apps.get(service.partition("_")[0], self.app)
        if journal is None or not service.startswith("DynamoDB"):
            with self.lock:
                return list(app(environ, start_response))
        answer: list[Any] = []

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            answer[:] = [status, headers]
            return lambda data: None

        with self.lock:
            touched: list[tuple[Any, str, dict[str, Any], Any]] = []
            request: Any = None
            if operation in ITEM_WRITES or operation in TABLE_WRITES:
                # The body is read here, and again by moto.
                length = int(environ.get("CONTENT_LENGTH") or 0)
                body = environ["wsgi.input"].read(length) if length else b""
                environ["wsgi.input"] = io.BytesIO(body)
                try:
                    request = json.loads(body)
                    if operation in ITEM_WRITES:
                        touched = self._touched(operation, request)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    return _error(
                        start_response,
                        "400 Bad Request",
                        "ValidationException",
                        f"the embedded store cannot read this {operation} request: {exc!r}",
                    )
            before = [(name, key, image_of(table, key)) for table, name, key, _ in touched]
            out = list(app(environ, capture))
            for table in {id(t): t for t, _, _, _ in touched}.values():
                fastpath.changed(table)
            ticket = journal.ticket()
            if answer and answer[0].startswith("200") and request is not None:
                if operation in ITEM_WRITES:
                    # A put leaves its item as it was sent; anything else is read back.
                    after = [
                        [name, key, put if put is not None else image_of(table, key)]
                        for table, name, key, put in touched
                    ]
                    payload: dict[str, Any] = {"i": after}
                else:
                    payload = {"t": [operation, request]}
                try:
                    ticket = journal.append(payload, before)
                except JournalFailed as exc:
                    self.undo(before)
                    return _unavailable(start_response, exc)
                except Exception as exc:  # nothing applied stays unless it is journaled
                    self.undo(before)
                    log.exception("the embedded store could not journal a %s", operation)
                    return _error(
                        start_response,
                        "500 Internal Server Error",
                        "InternalServerError",
                        f"the embedded store could not journal this {operation}: {exc!r}",
                    )
        try:
            journal.wait(ticket)
        except JournalFailed as exc:
            return _unavailable(start_response, exc)
        start_response(*answer)
        return out

    def table(self, name: str) -> Any:
        return self.backend.get_table(name)

    def _touched(
        self, operation: str, request: dict[str, Any]
    ) -> list[tuple[Any, str, dict[str, Any], Any]]:
        """(table, table name, key, the item if it is put whole) of every item the write
        request may change."""
        found: list[tuple[Any, str, dict[str, Any], Any]] = []

        def add(name: str, item_or_key: dict[str, Any], put: bool) -> None:
            try:
                table = self.table(name)
            except Exception:
                return  # moto answers that the table does not exist
            attributes = [table.hash_key_attr, table.range_key_attr]
            key = {a: item_or_key[a] for a in attributes if a and a in item_or_key}
            found.append((table, name, binary_values(key), item_or_key if put else None))

        if operation == "PutItem":
            add(request["TableName"], request["Item"], True)
        elif operation in ("UpdateItem", "DeleteItem"):
            add(request["TableName"], request["Key"], False)
        elif operation == "BatchWriteItem":
            for name, writes in request["RequestItems"].items():
                for write in writes:
                    if "PutRequest" in write:
                        add(name, write["PutRequest"]["Item"], True)
                    else:
                        add(name, write["DeleteRequest"]["Key"], False)
        else:
            for action in request["TransactItems"]:
                for kind, detail in action.items():
                    if kind == "Put":
                        add(detail["TableName"], detail["Item"], False)
                    elif kind in ("Update", "Delete"):
                        add(detail["TableName"], detail["Key"], False)
        return found

    def undo(self, before: list[tuple[str, dict[str, Any], dict[str, Any] | None]]) -> None:
        """Put back the items a write changed (called under the lock, newest write first)."""
        for name, key, image in reversed(before):
            table = self.table(name)
            set_item(table, key, image)
            fastpath.changed(table)
