"""The cipher that seals ``requestState``: AES-256-GCM under a key derived with HKDF-SHA256.

Apart from ``input_required`` so that ``cryptography`` is imported when a state is first sealed
or opened (a stateless-era input round), not by every server at start-up.
"""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["Cipher"]


class Cipher:
    """The AES-256-GCM cipher of one secret (of any length from 16 bytes), and its key id:
    the first 6 bytes of a hash of the derived key, naming it without revealing it."""

    def __init__(self, secret: bytes, info: bytes) -> None:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(secret)
        self.key_id = hashlib.sha256(b"kid" + key).digest()[:6]
        self._aead = AESGCM(key)

    def encrypt(self, nonce: bytes, plain: bytes, associated: bytes) -> bytes:
        return self._aead.encrypt(nonce, plain, associated)

    def decrypt(self, nonce: bytes, sealed: bytes, associated: bytes) -> bytes | None:
        """The plain text, or None if ``sealed`` (or ``associated``) is not what was sealed."""
        try:
            return self._aead.decrypt(nonce, sealed, associated)
        except InvalidTag:
            return None
