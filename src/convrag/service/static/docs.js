// Starts Swagger UI on /docs from local files (the page's CSP allows no inline script).
"use strict";
window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
