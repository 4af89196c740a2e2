"""The hosted pages of the sandbox: checkout (card or TR QR), card update, 3-D Secure challenge.

Modules: `flow` (what a submit does to sessions, payments and subscriptions), `forms`
(reading what the buyer typed), `languages` (the buyer's language, its catalogue in
``locale/``, CLDR's amounts and dates), `messages` (the words made in code, marked for
translation), `rendering` (Jinja2 templates and the QR image) and
`routes`: `routes.pages` (the checkout page, its submits, the 3DS return) and
`routes.challenge` (the simulated ACS's challenge page and answer). The TR QR payload
itself is `workbench.emvco`. Templates and the stylesheet ship in the package.

The pages sit above the features they use (`payments`, `sessions`, `subscriptions`),
none of which imports them.
"""
