/* /docs: Swagger UI signs each request it sends, in the browser.

   Loaded after Swagger UI's bundle and before the page starts it, this script wraps
   SwaggerUIBundle so that the page's own start gets two interceptors:

   - The OpenAPI document, as it arrives, shows the Authorize dialog one scheme,
     "WorkbenchKeys" (username: the API key, password: the secret key), in place of the
     three headers X-Api-Key, X-Signature and X-Timestamp; the operations that need
     those need the keys instead. The document the sandbox serves is left as it is.
   - Each request Swagger UI sends with the keys loses its Authorization header (the
     keys never leave the page) and gains X-Api-Key, X-Timestamp and X-Signature:
     HMAC-SHA256 under the secret key over the canonical string of workbench/signing.py,
     four lines joined by LF: the X-Timestamp text, the method in capitals, the path
     (no query string, no trailing slash) and the hex SHA-256 of the body's bytes.

   The keys live in Swagger UI's memory only: persistAuthorization is off (nothing in
   localStorage), and they are never put in an address. Reloading the page forgets them.
   WebCrypto needs a secure context: http://127.0.0.1, http://localhost or https. */
(function () {
  "use strict";

  var SCHEME = "WorkbenchKeys";
  var SIGNED_HEADERS = ["ApiKey", "Signature", "Timestamp"];
  var DESCRIPTION =
    "**Username**: your API key (`pk_…`). **Password**: your secret key (`sk_…`).\n\n" +
    "This page signs each request in your browser (HMAC-SHA256 over the canonical " +
    "string) and sends `X-Api-Key`, `X-Timestamp` and `X-Signature`. The secret key is " +
    "never sent and never stored: it stays in this page's memory until you log out " +
    "or reload.";
  var bundle = window.SwaggerUIBundle;
  if (typeof bundle !== "function") { return; }
  var encoder = new TextEncoder();
  var specUrl = null; // the document's address, set when the page starts Swagger UI

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) {
      return ("0" + b.toString(16)).slice(-2);
    }).join("");
  }

  function isSigned(requirement) {
    return SIGNED_HEADERS.some(function (name) { return name in requirement; });
  }

  // The document as the Authorize dialog should see it: the keys, not the headers.
  function withKeys(text) {
    var doc = JSON.parse(text);
    var schemes = (doc.components && doc.components.securitySchemes) || {};
    SIGNED_HEADERS.forEach(function (name) { delete schemes[name]; });
    schemes[SCHEME] = { type: "http", scheme: "basic", description: DESCRIPTION };
    doc.components = Object.assign(doc.components || {}, { securitySchemes: schemes });
    Object.keys(doc.paths || {}).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var op = doc.paths[path][method];
        if (op && Array.isArray(op.security) && op.security.some(isSigned)) {
          var own = {};
          own[SCHEME] = [];
          op.security = [own];
        }
      });
    });
    return JSON.stringify(doc);
  }

  function timestamp() {
    return new Date().toISOString().replace(/\.\d{3}Z$/, "Z"); // as format_timestamp
  }

  function routePath(url) {
    var path = new URL(url, window.location.href).pathname;
    return path.length > 1 ? path.replace(/\/+$/, "") || "/" : path;
  }

  function headerName(headers, wanted) {
    return Object.keys(headers || {}).find(function (name) {
      return name.toLowerCase() === wanted;
    });
  }

  async function sign(request) {
    if (request.loadSpec) { return request; }
    var auth = headerName(request.headers, "authorization");
    var value = auth && String(request.headers[auth]);
    if (!value || value.indexOf("Basic ") !== 0) { return request; }
    delete request.headers[auth]; // the keys stay in the page
    var keys = atob(value.slice(6));
    var colon = keys.indexOf(":");
    var apiKey = keys.slice(0, colon);
    var secretKey = keys.slice(colon + 1);
    if (!window.crypto || !window.crypto.subtle) {
      throw new Error("Signing needs WebCrypto, which browsers offer only on " +
        "http://127.0.0.1, http://localhost or https: open /docs at one of those.");
    }
    var body = request.body === undefined || request.body === null ? "" : request.body;
    if (typeof body !== "string") {
      throw new Error("This page signs JSON or empty bodies only.");
    }
    var stamp = timestamp();
    var digest = await crypto.subtle.digest("SHA-256", encoder.encode(body));
    var canonical = [stamp, request.method.toUpperCase(), routePath(request.url), hex(digest)]
      .join("\n");
    var key = await crypto.subtle.importKey(
      "raw", encoder.encode(secretKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    var signature = await crypto.subtle.sign("HMAC", key, encoder.encode(canonical));
    request.headers["X-Api-Key"] = apiKey;
    request.headers["X-Timestamp"] = stamp;
    request.headers["X-Signature"] = hex(signature);
    return request;
  }

  function keysInDocument(response) {
    if (response && typeof response.text === "string" && response.url === specUrl) {
      response.text = withKeys(response.text);
      response.data = response.text;
      response.body = JSON.parse(response.text);
      response.obj = response.body;
    }
    return response;
  }

  function signingBundle(config) {
    specUrl = new URL(config.url, window.location.href).href;
    return bundle(Object.assign({}, config, {
      persistAuthorization: false,
      requestInterceptor: sign,
      responseInterceptor: keysInDocument,
    }));
  }
  Object.keys(bundle).forEach(function (name) { signingBundle[name] = bundle[name]; });
  window.SwaggerUIBundle = signingBundle;
})();
