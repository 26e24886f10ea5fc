"""The present stage: page objects in, Vega-Lite charts, HTML and text outputs out."""
