"""`evalrun compare`: two runs loaded and paired (match), what changed, as JSON, text and Markdown (diff)."""
