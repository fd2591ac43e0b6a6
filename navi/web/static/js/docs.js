// Starts Swagger UI on /docs. It lives in a file because the page's policy runs no inline script.
// validatorUrl: null keeps Swagger UI from asking validator.swagger.io to check the schema.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  layout: "BaseLayout",
});
