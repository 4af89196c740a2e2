"""The hosted pages of the sandbox: checkout (card or TR QR), card update, 3DS return.

Modules: `routes` (HTTP), `flow` (what a submit does to sessions and payments),
`forms` (reading what the buyer typed), `rendering` (Jinja2 templates and the QR
image). The TR QR payload itself is `workbench.emvco`. Templates and the stylesheet
ship in the package.
"""

from workbench.sandbox.checkout.routes import router

__all__ = ["router"]
