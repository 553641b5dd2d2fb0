"""The web page that ``moot serve`` answers at ``/``: static files only (``static/``), served from the
package, with no request to any other host. See docs/web.md."""
