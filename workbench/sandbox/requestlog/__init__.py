"""The request log: each merchant's last API requests, for the dashboard.

The edge hands every exchange to `RequestQueue` (`workbench.sandbox.edge.exchange_log`);
`RequestLogWork` redacts and writes them in batches off the request's path, keeping
each merchant's newest N (``SandboxConfig.request_log_size``); `store` reads them back
by pages and by ``requestId``, and a signature refusal carries its `diagnosis`.
"""

from workbench.sandbox.requestlog.store import (
    STATUS_CLASSES,
    LoggedRequest,
    RequestFilter,
    find_request,
    list_requests,
)
from workbench.sandbox.requestlog.tables import request_log
from workbench.sandbox.requestlog.work import RequestLogWork, RequestQueue

__all__ = [
    "STATUS_CLASSES",
    "LoggedRequest",
    "RequestFilter",
    "RequestLogWork",
    "RequestQueue",
    "find_request",
    "list_requests",
    "request_log",
]
