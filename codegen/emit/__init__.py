"""Stage 3 of the pipeline: IR -> Python source (models by datamodel-code-generator, the rest by jinja2)."""
