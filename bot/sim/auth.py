"""App authentication as GitHub does it: an RS256 JWT signed with the App's key buys a one-hour
installation token; every other call needs a live token."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

TOKEN_LIFETIME_S = 3600
MAX_JWT_LIFETIME_S = 600 + 60  # GitHub's ten minutes, plus a minute of clock drift


class AuthError(Exception):
    """Why a credential was refused; the text is safe to show to the client."""


@dataclass
class AppKeys:
    """The App's RSA key pair, made fresh for every simulator and never written to disk."""

    private_key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )

    @property
    def private_key_pem(self) -> str:
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ).decode()

    def verify_app_jwt(self, header: str | None, app_id: int) -> None:
        """Accept `Authorization: Bearer <jwt>` signed by this key with iss == the App id."""
        if header is None or not header.lower().startswith("bearer "):
            raise AuthError("A JSON web token could not be decoded")
        token = header.split(" ", 1)[1].strip()
        try:
            claims = jwt.decode(
                token,
                self.private_key.public_key(),
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"], "verify_iat": False},
                leeway=60,
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthError("'Expiration time' claim ('exp') is too far in the past") from exc
        except jwt.PyJWTError as exc:
            raise AuthError("A JSON web token could not be decoded") from exc
        if str(claims["iss"]) != str(app_id):
            raise AuthError("'Issuer' claim ('iss') must be an Integer")
        if int(claims["exp"]) - int(claims["iat"]) > MAX_JWT_LIFETIME_S:
            raise AuthError("'Expiration time' claim ('exp') is too far in the future")


@dataclass
class TokenBook:
    """Installation tokens the simulator issued, with their expiry (epoch seconds)."""

    issued: dict[str, float] = field(default_factory=dict)

    def issue(self, prefix: str = "ghs_", lifetime: float = TOKEN_LIFETIME_S) -> tuple[str, float]:
        token = prefix + secrets.token_urlsafe(27)
        expires = time.time() + lifetime
        self.issued[token] = expires
        return token, expires

    def check(self, header: str | None) -> None:
        if header is None:
            raise AuthError("Requires authentication")
        scheme, _, token = header.partition(" ")
        if scheme.lower() not in {"token", "bearer"} or not token:
            raise AuthError("Bad credentials")
        expires = self.issued.get(token.strip())
        if expires is None or expires <= time.time():
            raise AuthError("Bad credentials")

    def expire_all(self) -> None:
        """Make every issued token stale, as an hour passing would."""
        for token in self.issued:
            self.issued[token] = 0.0
