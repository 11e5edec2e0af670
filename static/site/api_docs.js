// /v1/docs: Swagger UI over /v1/openapi.json, from files served here (CSP: script-src 'self').
// validatorUrl null: Swagger UI would otherwise send the document to an outside validator.
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    defaultModelExpandDepth: 3,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
