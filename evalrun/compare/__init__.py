"""`evalrun compare`: two runs loaded and paired (match), what changed (diff), as text and Markdown (render)."""
