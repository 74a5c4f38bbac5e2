"""The service's application: the routes of SPEC §10.1 assembled, and its OpenAPI document.

Routes are thin translations between HTTP and the `Engine`'s public methods;
the engine decides everything. Who calls, and as which principal, is
`engine.service.context.Caller`.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engine.service import routes
from engine.service.context import (
    API_VERSION,
    MAX_BODY,
    Caller,
    Service,
    authenticate,
    decision_json,
    json_response,
    may_act_as_card,
    refuse_card_fetch,
)
from engine.service.eventschemas import event_schemas
from engine.service.fastlane import FastLane
from engine.service.models import Problem
from engine.service.problems import (
    PROBLEM,
    BodyLimit,
    ServiceError,
    Unexpected,
    install_handlers,
)
from engine.service.protocol import MAX_HEAD
from engine.service.toolroutes import register_tools

# The names the routes share live in engine.service.context; they are re-exported
# here, where callers have always found them.
__all__ = ["API_VERSION", "Caller", "MAX_BODY", "Service", "asgi_app", "authenticate",
           "create_app", "decision_json", "fast_lane", "json_response", "may_act_as_card",
           "openapi_document"]

_bearer = HTTPBearer(auto_error=False, description="a token from the token file or "
                                                  "POST /v1/tokens")


def create_app(service: Service) -> FastAPI:
    """The FastAPI application of the service."""
    # The document is served by a route of our own (`routes.register`): FastAPI's
    # would answer anyone, where every route but health needs a token (SPEC §10.1),
    # and would leave itself out of the document.
    app = FastAPI(title="arrowgate", version=API_VERSION, openapi_url=None,
                  generate_unique_id_function=lambda route: route.name,
                  docs_url=None, redoc_url=None,
                  description="The arrowgate consent engine over HTTP (SPEC §10.1). Every "
                              "route but /v1/health needs `Authorization: Bearer <token>`.")
    app.state.service = service
    # A token revoked through another server on the store is refused here at the
    # next request: the token cache catches up with the store before trusting itself.
    service.tokens.follow(service.engine.catch_up, service.engine.store.token_feed)

    async def caller(request: Request,
                     credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> Caller:
        refuse_card_fetch(request.scope["headers"])  # before its token is read
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise ServiceError(401, "UNAUTHENTICATED",
                               "send Authorization: Bearer <token>",
                               reason="no-token")
        token_id, principal = authenticate(service.tokens, credentials.credentials)
        return Caller(principal, token_id, request, credentials.credentials)

    routes.register(app, service, caller)
    register_tools(app, service, caller)
    install_handlers(app)
    # Inside Starlette's last resort, which answers text/plain and closes the connection.
    app.add_middleware(Unexpected)
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]
    return app


def asgi_app(service: Service) -> Any:
    """What the server runs: the body limit, the fast lane, then the FastAPI app.

    An ASGI 3 application whose ``__call__`` is a plain method returning the
    awaitable (the body limit costs no coroutine of its own), so a server
    that guesses the interface (uvicorn's ``interface="auto"``) takes it for
    ASGI 2: run it with ``interface="asgi3"``, as `engine.service.serve` does.
    """
    return BodyLimit(FastLane(create_app(service), service), limit=service.max_body)


def fast_lane(app: Any) -> FastLane | None:
    """The fast lane of an app `asgi_app` made (the server offers it calls: `FastLane.take`)."""
    lane = app.app if isinstance(app, BodyLimit) else None
    return lane if isinstance(lane, FastLane) else None


_ERRORS = {
    "400": "bad input: a malformed request (its head: a Host not host[:port], a target "
           "neither a path nor an http URI; a Content-Length trailer), malformed JSON, unknown fields, wrong types, "
           "a query parameter the route does not take or one given twice (nothing changed)",
    "401": "no token, or an unknown or revoked one",
    "403": "this principal may not do this",
    "404": "no such thing (or not one this principal may see)",
    "409": "stale review or digest, or a package in the wrong state",
    "413": "the request body is too large",
    "415": "a body sent with a Content-Encoding (the server decodes none)",
    "417": "an Expect other than 100-continue (the request is not carried out)",
    "431": f"the request's head (request line and header fields) is over "
           f"{MAX_HEAD // 1024} KiB",
    "500": "an error the service did not expect (code INTERNAL); the server's log holds why",
    "501": "a Transfer-Encoding other than chunked (the server reads no other)",
    "503": "the change could not be written, so it did not happen (Retry-After, when the "
           "answer says when the store is asked again)",
    "505": "an HTTP version other than 1.x (the request is not carried out; 1.2 and later "
           "are served as 1.1)",
}
#: What any request may be answered, health's too: refused before a route reads it
#: (`engine.service.framing`, `engine.service.problems.BodyLimit`).
_BEFORE_ROUTES = frozenset({"400", "413", "415", "417", "431", "501", "505"})
#: Health's 503: asked ``ready`` (`engine.service.readiness`).
_NOT_READY = "asked ready=true: the store cannot be read now (STORE_FAILED, saying why)"
#: A read's 503: it asked for no change, so none is said not to have happened.
_NOT_READ = ("the store could not be read (STORE_FAILED, saying why; Retry-After, when it "
             "says when the store is asked again)")


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI 3.1 document, with problem+json errors instead of FastAPI's 422."""
    if app.openapi_schema:
        return app.openapi_schema
    doc = get_openapi(title=app.title, version=app.version, openapi_version="3.1.0",
                      description=app.description, routes=app.routes)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    # The events stream's messages: OpenAPI 3.1 cannot type a stream's items, so they
    # are components (CardEvent, a union by `type`) that the route names.
    schemas.update(event_schemas())
    stream = doc.get("paths", {}).get("/v1/events", {}).get("get")
    if stream is not None:
        media = stream["responses"]["200"]["content"]["text/event-stream"]
        media["x-message-schema"] = {"$ref": "#/components/schemas/CardEvent"}
    ref = {"$ref": "#/components/schemas/Problem"}
    for path, methods in doc.get("paths", {}).items():
        for method, op in methods.items():
            responses = op.setdefault("responses", {})
            responses.pop("422", None)
            public = path == "/v1/health"
            for status, text in _ERRORS.items():
                if public and status == "503":
                    text = _NOT_READY
                elif method == "get" and status == "503":
                    text = _NOT_READ
                elif public and status not in _BEFORE_ROUTES:
                    continue
                responses.setdefault(status, {"description": text,
                                              "content": {PROBLEM: {"schema": ref}}})
    app.openapi_schema = doc
    return doc
