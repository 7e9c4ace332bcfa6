"""The archive as an LTI 1.3 tool (1EdTech LTI Core 1.3, Security Framework 1.0, Deep Linking
2.0, Assignment and Grade Services 2.0, Names and Role Provisioning Services 2.0): a small layer
on PyJWT (JOSE: RS256 signatures, JWKS), as a platform such as Moodle or Canvas speaks it.

- **OIDC login** (:func:`begin_login`): the platform names its issuer; a registered one gets a
  fresh ``state`` and ``nonce`` (kept in the database, one use, ten minutes) and the browser is
  sent to the platform's authorisation URL.
- **Launch** (:func:`validate_launch`): the ``id_token`` must be signed by a key of the
  platform's JWKS, for this tool (``aud``), by the registered issuer, unexpired, with the
  login's nonce, used once; then the platform's user becomes an archive user (Instructor:
  examiner; anyone else: submitter), and the launch keeps its AGS line item and NRPS URL.
- **Tool keys** (:func:`tool_jwks`): the tool's RS256 key, made on first use, published at
  ``/lti/jwks``; it signs the Deep Linking response and the client assertion of the services'
  token requests (:func:`service_token`: the client-credentials grant with a JWT).
- **Services**: :func:`post_score` sends a checked submission's overall similarity to the line
  item; :func:`roster` reads the context's members.

Every refusal is a :class:`LtiRefused` (one line), and the caller records it in the audit log."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete as sql_delete
from sqlalchemy import select
from sqlalchemy.orm import Session

from coderiv.archive.models import LtiKey, LtiLaunch, LtiNonce, LtiPlatform, User, now
from coderiv.archive.states import Role
from coderiv.archive.users import token_hash
from coderiv.errors import CoderivError, InputError

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DL_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
ROSTER_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
#: Seconds an OIDC login may take before its launch, and the clock skew a token may have.
LOGIN_SECONDS = 600
LEEWAY = 60
#: Seconds a service request may take.
TIMEOUT = 15


class LtiRefused(CoderivError):
    """A login or launch refused (an unregistered platform, a bad token...): nothing stored."""


@dataclass(frozen=True)
class Launch:
    """A validated launch: the archive user it signs in, the stored launch, and what to show."""

    user: User
    launch_id: int
    kind: str
    deep_link_return: str | None
    deep_link_data: str | None
    platform: LtiPlatform


def platform_by(session: Session, issuer: str, client_id: str | None = None) -> LtiPlatform | None:
    query = select(LtiPlatform).where(LtiPlatform.issuer == issuer)
    if client_id:
        query = query.where(LtiPlatform.client_id == client_id)
    return session.scalars(query.order_by(LtiPlatform.id)).first()


def register(session: Session, issuer: str, client_id: str, login_url: str, token_url: str, jwks_url: str,
             deployment_id: str | None = None) -> LtiPlatform:
    """Register a platform (``coderiv lti add``); its URLs must be http(s)."""
    for name, url in (("login", login_url), ("token", token_url), ("key set", jwks_url), ("issuer", issuer)):
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise InputError(f"the platform's {name} URL must be http(s) (got {url!r})")
    if platform_by(session, issuer, client_id) is not None:
        raise InputError(f"the platform {issuer} with client id {client_id} is registered already")
    platform = LtiPlatform(issuer=issuer, client_id=client_id, deployment_id=deployment_id, login_url=login_url,
                           token_url=token_url, jwks_url=jwks_url)
    session.add(platform)
    session.flush()
    return platform


def begin_login(session: Session, params: dict[str, str], redirect_uri: str) -> str:
    """The platform's authorisation URL to send the browser to (OIDC third-party login)."""
    import jwt  # noqa: F401  (coderiv[lti]: refused in one line before anything is stored)

    issuer, login_hint = params.get("iss", ""), params.get("login_hint", "")
    if not issuer or not login_hint:
        raise LtiRefused("an LTI login needs iss and login_hint")
    platform = platform_by(session, issuer, params.get("client_id"))
    if platform is None:
        raise LtiRefused(f"the platform {issuer} is not registered (coderiv lti add)")
    state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    # logins older than their ten minutes can never launch: forgotten, so the table stays small
    session.execute(sql_delete(LtiNonce).where(LtiNonce.created < now() - dt.timedelta(seconds=LOGIN_SECONDS)))
    session.add(LtiNonce(platform_id=platform.id, state=state, nonce=nonce))
    query = {
        "scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
        "client_id": platform.client_id, "redirect_uri": redirect_uri, "login_hint": login_hint,
        "state": state, "nonce": nonce,
    }
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    separator = "&" if "?" in platform.login_url else "?"
    return platform.login_url + separator + urllib.parse.urlencode(query)


def _platform_key(platform: LtiPlatform, token: str) -> Any:
    import jwt

    try:
        return jwt.PyJWKClient(platform.jwks_url, cache_keys=False, timeout=TIMEOUT).get_signing_key_from_jwt(token).key
    except jwt.PyJWKClientError as exc:
        raise LtiRefused(f"the launch's key is not in the platform's key set ({exc})") from None
    except jwt.DecodeError:
        raise LtiRefused("the launch's id_token is not a JWT") from None


def validate_launch(session: Session, id_token: str, state: str) -> Launch:
    """Check the launch (module docstring) and sign its user in; :class:`LtiRefused` otherwise,
    with nothing stored but the login's nonce marked used."""
    import jwt

    pending = session.scalar(select(LtiNonce).where(LtiNonce.state == state)) if state else None
    if pending is None:
        raise LtiRefused("no LTI login started with this state (start the launch from the platform)")
    if pending.used is not None:
        raise LtiRefused("this launch was used already (a replayed nonce)")
    if (now() - pending.created).total_seconds() > LOGIN_SECONDS:
        raise LtiRefused("the LTI login is older than 10 minutes; launch again from the platform")
    platform = session.get(LtiPlatform, pending.platform_id)
    assert platform is not None
    try:
        claims: dict[str, Any] = jwt.decode(
            id_token, _platform_key(platform, id_token), algorithms=["RS256"], audience=platform.client_id,
            issuer=platform.issuer, leeway=LEEWAY, options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]})
    except jwt.ExpiredSignatureError:
        raise LtiRefused("the launch's id_token has expired") from None
    except jwt.InvalidAudienceError:
        raise LtiRefused(f"the launch's id_token is not for this tool (audience is not {platform.client_id})") from None
    except jwt.InvalidIssuerError:
        raise LtiRefused(f"the launch's id_token was not issued by {platform.issuer}") from None
    except jwt.InvalidSignatureError:
        raise LtiRefused("the launch's id_token signature does not verify against the platform's keys (forged)") from None
    except jwt.PyJWTError as exc:
        raise LtiRefused(f"the launch's id_token is invalid ({exc})") from None
    if claims["nonce"] != pending.nonce:
        raise LtiRefused("the launch's nonce is not the login's")
    pending.used = now()  # one use, whatever follows
    deployment = claims.get(CLAIM + "deployment_id")
    if platform.deployment_id and deployment != platform.deployment_id:
        raise LtiRefused(f"the launch's deployment {deployment!r} is not the registered one")
    kind = str(claims.get(CLAIM + "message_type", ""))
    if kind not in ("LtiResourceLinkRequest", "LtiDeepLinkingRequest"):
        raise LtiRefused(f"unsupported LTI message type {kind!r}")
    user = _user_for(session, platform, claims)
    ags, nrps = claims.get(AGS_CLAIM) or {}, claims.get(NRPS_CLAIM) or {}
    launch = LtiLaunch(
        platform_id=platform.id, user_id=user.id, sub=str(claims["sub"]), name=_name(claims),
        context_id=(claims.get(CLAIM + "context") or {}).get("id"), resource_link=(claims.get(CLAIM + "resource_link") or {}).get("id"),
        lineitem=ags.get("lineitem"), memberships=nrps.get("context_memberships_url"))
    session.add(launch)
    session.flush()
    settings = claims.get(DL_CLAIM + "deep_linking_settings") or {}
    return Launch(user, launch.id, kind, settings.get("deep_link_return_url"), settings.get("data"), platform)


def _name(claims: dict[str, Any]) -> str | None:
    name = claims.get("name") or " ".join(p for p in (claims.get("given_name"), claims.get("family_name")) if p)
    return str(name)[:200] or None


def _user_for(session: Session, platform: LtiPlatform, claims: dict[str, Any]) -> User:
    """The archive user of the platform's ``sub`` (made at the first launch; the role follows
    the latest launch's: an Instructor is an examiner)."""
    digest = hashlib.sha256(f"{platform.id}\0{claims['sub']}".encode()).hexdigest()[:24]
    name = f"lti-{platform.id}-{digest}"
    role = Role.EXAMINER if INSTRUCTOR in (claims.get(CLAIM + "roles") or []) else Role.SUBMITTER
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        user = User(name=name, role=role, token_hash=token_hash(secrets.token_urlsafe(32)))
        session.add(user)
        session.flush()
    elif user.role != Role.ADMIN:
        user.role = role
    return user


def sign_in_token(user: User) -> str:
    """A fresh token for ``user`` (the browser's cookie after a launch; the older one stops)."""
    token = secrets.token_urlsafe(32)
    user.token_hash = token_hash(token)
    return token


def _tool_key(session: Session) -> LtiKey:
    """The tool's newest key; the first is made and committed in a transaction of its own (the
    caller's may wait on the platform, which asks the tool's key set meanwhile)."""
    key = session.scalars(select(LtiKey).order_by(LtiKey.id.desc())).first()
    if key is not None:
        return key
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    with Session(session.get_bind()) as own, own.begin():
        if own.scalars(select(LtiKey)).first() is None:
            own.add(LtiKey(kid=secrets.token_hex(16), private_pem=pem))
    made = session.scalars(select(LtiKey).order_by(LtiKey.id.desc())).first()
    assert made is not None
    return made


def tool_jwks(session: Session) -> dict[str, list[dict[str, Any]]]:
    """The tool's public key set (``/lti/jwks``)."""
    import jwt
    from cryptography.hazmat.primitives import serialization

    key = _tool_key(session)
    private = serialization.load_pem_private_key(key.private_pem.encode(), None)
    public: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))  # type: ignore[arg-type]
    public.update(kid=key.kid, alg="RS256", use="sig")
    return {"keys": [public]}


def tool_sign(session: Session, claims: dict[str, Any]) -> str:
    """``claims`` signed with the tool's key (RS256, its ``kid`` in the header)."""
    import jwt

    key = _tool_key(session)
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})


def deep_link_response(session: Session, launch: Launch, url: str, title: str) -> str:
    """The signed Deep Linking response placing the tool (a resource link to ``url``)."""
    moment = int(time.time())
    claims = {
        "iss": launch.platform.client_id, "aud": launch.platform.issuer, "iat": moment, "exp": moment + 300,
        "nonce": secrets.token_urlsafe(16), CLAIM + "message_type": "LtiDeepLinkingResponse", CLAIM + "version": "1.3.0",
        CLAIM + "deployment_id": launch.platform.deployment_id,
        DL_CLAIM + "content_items": [{"type": "ltiResourceLink", "title": title, "url": url}],
    }
    if launch.deep_link_data:
        claims[DL_CLAIM + "data"] = launch.deep_link_data
    return tool_sign(session, claims)


def _request(url: str, data: bytes | None, headers: dict[str, str], method: str) -> Any:
    request = urllib.request.Request(url, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 - the admin registered the URL
            body = answer.read()
    except urllib.error.HTTPError as exc:
        raise CoderivError(f"the platform answered {exc.code} to {method} {url}") from None
    except OSError as exc:
        raise CoderivError(f"cannot reach the platform at {url}: {exc}") from None
    return json.loads(body) if body else None


def service_token(session: Session, platform: LtiPlatform, scopes: list[str]) -> str:
    """An access token for the platform's services (client credentials, a signed JWT assertion)."""
    moment = int(time.time())
    assertion = tool_sign(session, {"iss": platform.client_id, "sub": platform.client_id, "aud": platform.token_url,
                                    "iat": moment, "exp": moment + 300, "jti": secrets.token_urlsafe(16)})
    form = urllib.parse.urlencode({
        "grant_type": "client_credentials", "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion, "scope": " ".join(scopes)}).encode()
    answer = _request(platform.token_url, form, {"Content-Type": "application/x-www-form-urlencoded"}, "POST")
    return str(answer["access_token"])


def post_score(session: Session, launch: LtiLaunch, overall: float) -> None:
    """Send ``overall`` (the similarity, out of 100) to the launch's line item (AGS score)."""
    if not launch.lineitem:
        raise CoderivError("the launch offered no line item to return a score to")
    token = service_token(session, launch.platform, [SCORE_SCOPE])
    path, _, query = launch.lineitem.partition("?")
    url = path.rstrip("/") + "/scores" + (f"?{query}" if query else "")
    score = {"userId": launch.sub, "scoreGiven": round(overall, 1), "scoreMaximum": 100.0,
             "activityProgress": "Completed", "gradingProgress": "FullyGraded",
             "timestamp": now().isoformat(timespec="seconds") + "Z", "comment": "coderiv: overall similarity (%)"}
    _request(url, json.dumps(score).encode(), {"Content-Type": "application/vnd.ims.lis.v1.score+json",
                                               "Authorization": f"Bearer {token}"}, "POST")


@dataclass(frozen=True)
class Member:
    user_id: str
    name: str | None
    roles: list[str]


def roster(session: Session, launch: LtiLaunch) -> list[Member]:
    """The members of the launch's context (NRPS)."""
    if not launch.memberships:
        raise CoderivError("the launch offered no roster (Names and Role Provisioning Services)")
    token = service_token(session, launch.platform, [ROSTER_SCOPE])
    answer = _request(launch.memberships, None, {"Accept": "application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
                                                 "Authorization": f"Bearer {token}"}, "GET")
    return [Member(str(m.get("user_id")), m.get("name"), list(m.get("roles", []))) for m in answer.get("members", [])]
