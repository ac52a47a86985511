"""The machinery of web_scan and web_execute_js: the browser session and its launch, page helpers, the
in-page JavaScript (page_scan.js, execute_js.js) and the fitting of a scanned page to its token budget."""
