"""The hosted pages' routes: `pages` (checkout, its submits, the 3DS return) and `challenge`
(the simulated ACS's challenge page and its answer)."""
