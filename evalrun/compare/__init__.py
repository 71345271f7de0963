"""`evalrun compare`: the two runs loaded and their cases paired (match), what changed and its roll-ups (diff),
as text and Markdown (render; HTML: report/html)."""
