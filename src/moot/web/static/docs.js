// Swagger UI for /docs, from the package's own copy (no CDN); the validator badge is off (it would call out).
window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true,
  persistAuthorization: false, tryItOutEnabled: false });
