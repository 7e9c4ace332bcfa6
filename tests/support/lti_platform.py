"""A real LTI 1.3 platform for the tests, built on ``lti1p3platform`` (PyPI: the platform side
of LTI 1.3, Deep Linking, AGS and NRPS): a FastAPI app served by uvicorn on 127.0.0.1 that
starts a launch (OIDC login initiation), answers the tool's authorisation request with a signed
``id_token`` (its launch form), publishes its key set, issues service tokens to the tool (the
tool's client assertion checked against the tool's key set), receives scores on its line item,
serves the course roster and receives Deep Linking responses, as Moodle or Canvas do."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from lti1p3platform.framework.fastapi.message_launch import FastapiMessageLaunch
from lti1p3platform.framework.fastapi.oidc_login import FastAPIOIDCLogin
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.registration import Registration

from tests.support.network import free_port

CLIENT_ID = "coderiv-tool"
DEPLOYMENT_ID = "deployment-1"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
#: the course's people: login hint -> (name, role)
PEOPLE = {"alice-17": ("Alice Novakova", LEARNER), "ivan-3": ("Ivan Horak", INSTRUCTOR)}


def rsa_pem() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private.decode(), public.decode()


class Conf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: Any) -> None:
        self.registration: Registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self.registration


class Login(FastAPIOIDCLogin):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]


class Launch(FastapiMessageLaunch, LTIAdvantageMessageLaunchAbstract):
    pass


@dataclass
class Platform:
    """The running platform: its base URL and what the tool sent it."""

    base: str
    tool: str
    private_pem: str
    public_pem: str
    scores: list[dict[str, Any]] = field(default_factory=list)
    deep_links: list[list[dict[str, Any]]] = field(default_factory=list)
    tokens_issued: int = 0
    server: Any = None

    @property
    def issuer(self) -> str:
        return self.base

    def registration(self) -> Registration:
        reg = Registration()
        reg.set_iss(self.issuer).set_client_id(CLIENT_ID).set_deployment_id(DEPLOYMENT_ID)
        reg.set_oidc_login_url(f"{self.tool}/lti/login").set_launch_url(f"{self.tool}/lti/launch")
        reg.set_deeplink_launch_url(f"{self.tool}/lti/launch")
        reg.set_platform_public_key(self.public_pem).set_platform_private_key(self.private_pem)
        reg.set_tool_key_set_url(f"{self.tool}/lti/jwks")
        return reg

    def conf(self) -> Conf:
        conf = Conf(registration=self.registration())
        conf.get_registration()
        return conf

    def start_url(self, person: str, deep: bool = False) -> str:
        return f"{self.base}/start?person={person}" + ("&deep=1" if deep else "")

    def stop(self) -> None:
        self.server.should_exit = True


def make_app(platform: Platform) -> FastAPI:
    app = FastAPI()

    @app.get("/start")
    def start(request: Request, person: str, deep: int = 0) -> Response:
        login = Login(request, platform.conf())
        login.set_lti_message_hint(hint=f"{person}:{deep}")
        response: Response = login.initiate_login(person)
        return response

    @app.get("/auth")
    def auth(request: Request) -> Response:
        person, _, deep = request.query_params["lti_message_hint"].partition(":")
        name, role = PEOPLE[person]
        launch = Launch(request, platform.conf())
        launch.set_user_data(person, [role], full_name=name)
        launch.set_resource_link_claim("thesis-assignment", title="Thesis")
        launch.set_launch_context_claim("course-42", context_title="Thesis seminar")
        launch.set_ags(f"{platform.base}/lineitems", f"{platform.base}/lineitems/1", scores_service_enabled=True)
        launch.set_nrps(f"{platform.base}/memberships")
        if deep == "1":
            launch.set_dl(f"{platform.base}/deep-link-return", title="Add a tool")
        result: Response = launch.lti_launch()
        return result

    @app.get("/jwks")
    def jwks() -> JSONResponse:
        return JSONResponse({"keys": platform.registration().get_jwks()})

    @app.post("/token")
    async def token(request: Request) -> JSONResponse:
        form = dict((await request.form()).items())
        answer = platform.conf().get_access_token(form)  # checks the tool's assertion against /lti/jwks
        platform.tokens_issued += 1
        return JSONResponse(dict(answer))

    def check(request: Request) -> None:
        platform.conf().validate_token(request.headers["authorization"].removeprefix("Bearer "))

    @app.post("/lineitems/1/scores")
    async def scores(request: Request) -> Response:
        check(request)
        platform.scores.append(await request.json())
        return Response(status_code=200)

    @app.get("/memberships")
    def memberships(request: Request) -> JSONResponse:
        check(request)
        members = [{"user_id": uid, "name": name, "roles": [role], "status": "Active"} for uid, (name, role) in PEOPLE.items()]
        return JSONResponse({"id": f"{platform.base}/memberships", "context": {"id": "course-42"}, "members": members})

    @app.post("/deep-link-return")
    async def deep_link_return(request: Request) -> HTMLResponse:
        form = dict((await request.form()).items())
        platform.deep_links.append(platform.conf().validate_deeplinking_resp(form))
        return HTMLResponse("<!doctype html><title>placed</title><h1 id=placed>The tool is placed in the assignment.</h1>")

    return app


def start_platform(tool: str) -> Platform:
    """The platform on a free port of 127.0.0.1, registered with the tool at ``tool`` (its URLs)."""
    import uvicorn

    port = free_port()
    private, public = rsa_pem()
    platform = Platform(f"http://127.0.0.1:{port}", tool, private, public)
    server = uvicorn.Server(uvicorn.Config(make_app(platform), host="127.0.0.1", port=port, log_level="warning"))
    platform.server = server
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    return platform


def start_tool(index: Any, url: str) -> tuple[str, Any, threading.Thread]:
    """``coderiv serve --archive`` of ``index`` (database ``url``) in a thread of this process on
    a free port, with one check worker: its base URL, uvicorn server and thread."""
    import uvicorn

    from coderiv.archive.service import ArchiveSettings
    from coderiv.web.app import create_app
    from coderiv.web.context import ServeSettings

    port = free_port()
    app = create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=1, lease=5)))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


def register_command(platform: Platform, url: str) -> list[str]:
    """The ``coderiv lti add`` arguments registering ``platform`` in the archive at ``url``."""
    return ["lti", "add", platform.issuer, "--client-id", CLIENT_ID, "--deployment-id", DEPLOYMENT_ID,
            "--login-url", f"{platform.base}/auth", "--token-url", f"{platform.base}/token",
            "--jwks-url", f"{platform.base}/jwks", "--database", url]
