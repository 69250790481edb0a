// The API reference page at /docs: Swagger UI served from its npm package (no CDN) over the contract.
import express, { type Router } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Chunk Search Service API reference</title>
  <link rel="stylesheet" href="./swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="./swagger-ui-bundle.js"></script>
  <script>
    window.onload = () => SwaggerUIBundle({ url: '../openapi.json', dom_id: '#reference', deepLinking: true });
  </script>
</body>
</html>`;

export function docsRouter(): Router {
  const router = express.Router();
  router.get('/', (req, res) => {
    // Relative asset links need the trailing slash.
    if (!req.originalUrl.split('?')[0].endsWith('/')) return res.redirect(301, req.baseUrl + '/');
    res.type('html').send(page);
  });
  router.use(express.static(getAbsoluteFSPath(), { index: false }));
  return router;
}
