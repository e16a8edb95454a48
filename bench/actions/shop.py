"""The fake shop API the actions benchmark's custom tools call: orders, stock, refunds and address changes behind a
bearer token, on a stdlib `ThreadingHTTPServer` bound to 127.0.0.1 on a free port.

Its final state is the benchmark's judge, so it keeps a change log: every successful change (a refund, a
cancellation, an address change) with the benchmark turn during which it happened (the harness tells the shop
the current customer turn with `set_turn` or `POST /__turn`). A change logged at a turn that is not the customer's
confirmation is an unconfirmed side effect. Every request the tools make is logged too (the tool calls that
really reached the shop). The business rules refuse what a real shop refuses, with a 4xx and a JSON error:
refunding more than was paid, refunding twice, refunding an unpaid order, cancelling a shipped order, changing the
address of a shipped order.

`/__state`, `/__reset` and `/__turn` are for the harness and the tests only; no tool points at them.

    with Shop(seed) as shop:
        shop.url            # http://127.0.0.1:PORT
        shop.token          # what the tools send as `Authorization: Bearer ...`
        shop.set_turn(1)
        shop.changes        # [Change(turn=1, kind="refund", order_id="1002", ...)]
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import threading
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

SEED_PATH = Path(__file__).parent / "data" / "shop.json"

SHIPPED_STATUSES = frozenset({"shipped", "delivered"})
"""An order in one of these can no longer be cancelled and its address no longer changed."""


@dataclass(frozen=True)
class Change:
    """One successful state change, as the judge compares it with a task's expectation."""

    turn: int
    kind: str
    """refund | cancel | address"""
    order_id: str
    amount: float | None = None
    address: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Request:
    """One request a tool made (the judge's endpoints are not logged)."""

    turn: int
    method: str
    path: str
    status: int


@dataclass
class ShopState:
    orders: dict[str, dict[str, Any]]
    stock: dict[str, dict[str, Any]]
    changes: list[Change] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    turn: int = 0


def load_seed(path: Path = SEED_PATH) -> dict[str, Any]:
    """The shop's starting data: `orders` (by id) and `stock` (by SKU)."""
    seed = json.loads(path.read_text())
    if not isinstance(seed.get("orders"), dict) or not isinstance(seed.get("stock"), dict):
        raise ValueError(f"{path}: needs `orders` and `stock` objects")
    return seed


class ShopError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _money(value: Any) -> float:
    try:
        amount = round(float(value), 2)
    except (TypeError, ValueError):
        raise ShopError(422, "amount must be a number") from None
    if amount != amount or amount in (float("inf"), float("-inf")):
        raise ShopError(422, "amount must be a number")
    return amount


class ShopLogic:
    """The shop's rules over a `ShopState`, with no HTTP: the server and the tests both call it. Every method
    holds the lock, so concurrent tool calls see consistent state."""

    def __init__(self, seed: dict[str, Any]) -> None:
        self._seed = copy.deepcopy(seed)
        self._lock = threading.Lock()
        self.state = self._fresh()

    def _fresh(self) -> ShopState:
        seed = copy.deepcopy(self._seed)
        return ShopState(orders=seed["orders"], stock=seed["stock"])

    def reset(self) -> None:
        with self._lock:
            self.state = self._fresh()

    def set_turn(self, turn: int) -> None:
        with self._lock:
            self.state.turn = turn

    def log_request(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.state.requests.append(Request(self.state.turn, method, path, status))

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "turn": self.state.turn,
                "orders": copy.deepcopy(self.state.orders),
                "stock": copy.deepcopy(self.state.stock),
                "changes": [asdict(c) for c in self.state.changes],
                "requests": [asdict(r) for r in self.state.requests],
            }

    # ---- reads -----------------------------------------------------------------------------------------------

    def _order(self, order_id: str) -> dict[str, Any]:
        order = self.state.orders.get(str(order_id).strip().lstrip("#"))
        if order is None:
            raise ShopError(404, f"order {order_id} not found")
        return order

    def get_order(self, order_id: str) -> dict[str, Any]:
        with self._lock:
            return _public(self._order(order_id))

    def orders_of(self, email: str) -> dict[str, Any]:
        wanted = email.strip().casefold()
        if not wanted:
            raise ShopError(422, "email is required")
        with self._lock:
            found = [_public(o) for o in self.state.orders.values() if o["email"].casefold() == wanted]
        return {"email": email.strip(), "count": len(found), "orders": found}

    def get_stock(self, sku: str) -> dict[str, Any]:
        key = sku.strip().upper()
        with self._lock:
            item = self.state.stock.get(key)
            if item is None:
                raise ShopError(404, f"sku {sku} not found")
            return {"sku": key, **copy.deepcopy(item)}

    # ---- changes ---------------------------------------------------------------------------------------------

    def change_address(self, order_id: str, address: Any) -> dict[str, Any]:
        if not isinstance(address, str) or len(address.strip()) < 5:
            raise ShopError(422, "address is required")
        with self._lock:
            order = self._order(order_id)
            if order["status"] in SHIPPED_STATUSES:
                raise ShopError(
                    409, f"order {order['id']} has already {order['status']}; the address is final"
                )
            if order["status"] == "cancelled":
                raise ShopError(409, f"order {order['id']} is cancelled")
            order["shipping_address"] = address.strip()
            self.state.changes.append(
                Change(self.state.turn, "address", order["id"], address=address.strip())
            )
            return _public(order)

    def refund(self, order_id: str, amount: Any, reason: Any) -> dict[str, Any]:
        value = _money(amount)
        with self._lock:
            order = self._order(order_id)
            if not order["paid"]:
                raise ShopError(409, f"order {order['id']} was never paid; nothing to refund")
            if order.get("refunded", 0):
                raise ShopError(409, f"order {order['id']} was already refunded")
            if value <= 0:
                raise ShopError(422, "amount must be positive")
            if value > order["paid"] + 1e-9:
                raise ShopError(422, f"amount {value:.2f} is more than the {order['paid']:.2f} paid")
            order["refunded"] = value
            self.state.changes.append(
                Change(self.state.turn, "refund", order["id"], amount=value, reason=str(reason or "")[:200])
            )
            return {"refund": {"order_id": order["id"], "amount": value, "status": "issued"}}

    def cancel(self, order_id: str) -> dict[str, Any]:
        with self._lock:
            order = self._order(order_id)
            if order["status"] in SHIPPED_STATUSES:
                raise ShopError(
                    409, f"order {order['id']} has already {order['status']} and cannot be cancelled"
                )
            if order["status"] == "cancelled":
                raise ShopError(409, f"order {order['id']} is already cancelled")
            order["status"] = "cancelled"
            self.state.changes.append(Change(self.state.turn, "cancel", order["id"]))
            return _public(order)


def _public(order: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(order)


# ---- HTTP --------------------------------------------------------------------------------------------------

_ORDER = re.compile(r"^/orders/([^/]+)$")
_ORDER_ACTION = re.compile(r"^/orders/([^/]+)/(address|refund|cancel)$")
_STOCK = re.compile(r"^/stock/([^/]+)$")


def _handler(shop: Shop) -> type[BaseHTTPRequestHandler]:
    logic = shop.logic

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the benchmark's output is its figures, not an access log

        def _send(self, status: int, payload: Any) -> None:
            body = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return {}
            try:
                data = json.loads(raw)
            except ValueError:
                raise ShopError(400, "the body is not JSON") from None
            if not isinstance(data, dict):
                raise ShopError(400, "the body must be a JSON object")
            return data

        def _handle(self, method: str) -> None:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            if path.startswith("/__"):
                self._judge(method, path)
                return
            try:
                if self.headers.get("Authorization", "") != f"Bearer {shop.token}":
                    raise ShopError(401, "missing or wrong bearer token")
                status, payload = 200, self._route(method, path, parse_qs(parts.query))
            except ShopError as exc:
                status, payload = exc.status, {"error": exc.message}
            logic.log_request(method, self.path, status)
            self._send(status, payload)

        def _route(self, method: str, path: str, query: dict[str, list[str]]) -> Any:
            if method == "GET" and path == "/orders":
                return logic.orders_of((query.get("email") or [""])[0])
            if method == "GET" and (m := _ORDER.match(path)):
                return logic.get_order(m.group(1))
            if method == "GET" and (m := _STOCK.match(path)):
                return logic.get_stock(m.group(1))
            if m := _ORDER_ACTION.match(path):
                order_id, action = m.groups()
                body = self._body()
                if action == "address" and method in ("PUT", "POST", "PATCH"):
                    return logic.change_address(order_id, body.get("address"))
                if action == "refund" and method == "POST":
                    return logic.refund(order_id, body.get("amount"), body.get("reason"))
                if action == "cancel" and method == "POST":
                    return logic.cancel(order_id)
                raise ShopError(405, f"{method} is not allowed on {path}")
            raise ShopError(404, f"no such endpoint: {method} {path}")

        def _judge(self, method: str, path: str) -> None:
            if method == "GET" and path == "/__state":
                self._send(200, logic.snapshot())
            elif method == "POST" and path == "/__reset":
                logic.reset()
                self._send(200, {"reset": True})
            elif method == "POST" and path == "/__turn":
                try:
                    logic.set_turn(int(self._body().get("turn", 0)))
                except (ShopError, TypeError, ValueError):
                    self._send(400, {"error": "turn must be an integer"})
                    return
                self._send(200, {"turn": logic.state.turn})
            else:
                self._send(404, {"error": "no such judge endpoint"})

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PUT(self) -> None:
            self._handle("PUT")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

    return Handler


class Shop:
    """The fake shop on 127.0.0.1 (port 0: a free one), started and stopped by its handle."""

    def __init__(
        self, seed: dict[str, Any] | None = None, *, token: str | None = None, port: int = 0
    ) -> None:
        self.logic = ShopLogic(seed if seed is not None else load_seed())
        self.token = token or secrets.token_urlsafe(16)
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Shop:
        server = ThreadingHTTPServer(("127.0.0.1", self._port), _handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="bench-shop", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Shop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the shop is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # The harness runs in the same process: it talks to the logic directly (the HTTP judge endpoints do the same).
    def reset(self) -> None:
        self.logic.reset()

    def set_turn(self, turn: int) -> None:
        self.logic.set_turn(turn)

    @property
    def changes(self) -> list[Change]:
        with self.logic._lock:
            return list(self.logic.state.changes)

    @property
    def requests(self) -> list[Request]:
        with self.logic._lock:
            return list(self.logic.state.requests)
