"""The sandbox's OpenAPI document and what is derived from it.

`document` builds the document from the app's routes (``workbench openapi``, the guide's
``openapi.json``), with the request and response examples of `examples` and the
``webhooks`` section of `webhooks`; `postman` builds the Postman collection from the
same operations and examples (``workbench postman``). The document's names are
importable from here; the collection's from `workbench.sandbox.openapi.postman`, which
names the edge's public routes and so is not imported by this package.
"""

from __future__ import annotations

from workbench.sandbox.openapi.document import SECURITY_SCHEMES, openapi_document, openapi_json

__all__ = ["SECURITY_SCHEMES", "openapi_document", "openapi_json"]
