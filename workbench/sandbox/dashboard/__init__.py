"""The merchant's dashboard under ``/dashboard``: objects, events and deliveries, the clock.

Server-rendered pages (Jinja2, as the hosted pages, in Turkish and English from the
same catalogue), one small script for the live lists, the hosted pages' headers.

| module | holds |
|---|---|
| `site` | a page's registration (`Page`, `mount`), session and form checks, rendering |
| `sessions` | the signed session cookie and its CSRF token |
| `signin` | who may sign in: a key pair, the admin token, the banner's one-time link |
| `views` | what the pages read: lists, objects with their derived timelines, events |
| `live` | the live lists' server-sent events and their sources (the request log adds one) |
| `routes/` | a module per page: `shell` (sign-in, home), `objects`, `events`, `clock`, `settings` |

Nothing here is imported until the app is built; the composition root
(`workbench.sandbox.app`) mounts the pages in one visible list.
"""
