"""Results of card tokenization."""

from __future__ import annotations

from workbench.models._base import APIObject

__all__ = ["CardToken"]


class CardToken(APIObject):
    """A vault token and what may be shown of its card (never the number itself)."""

    token: str
    card_mask: str | None = None
    card_brand: str | None = None
    card_type: str | None = None
    bin: str | None = None
    last4: str | None = None

    def __repr__(self) -> str:
        return f"CardToken(token={self.token!r}, card_mask={self.card_mask!r})"

    @property
    def id(self) -> str:
        """The vault token, which is the card's id (the same as ``token``)."""
        return self.token
