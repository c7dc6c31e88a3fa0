// The interactive API reference: the vendored Swagger UI (../vendor/README.md) renders the app's
// own OpenAPI document. It runs under the pages' strict CSP (no inline script or style, no eval)
// and loads nothing from another host; "Try it out" calls this server with the page's sign-in.
const root = document.getElementById('swagger-ui');

window.SwaggerUIBundle({
  url: root.dataset.specUrl,
  domNode: root,
  deepLinking: true,
  validatorUrl: null,
  queryConfigEnabled: false,
  defaultModelsExpandDepth: 0,
  onComplete: () => { document.body.dataset.ready = 'true'; },
});
