"""sitegen: a static website for browsing and comparing SkyRL training runs."""

__version__ = "0.1.0"
