"""The commands: build(), the CLI, serve and gh-deploy, thin shells over the stages."""
