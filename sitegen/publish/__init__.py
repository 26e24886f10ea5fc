"""Publishing a built site: the gate that checks it, and ``gh-deploy`` that commits and pushes it.

* :mod:`sitegen.publish.gate`: every byte of every file of the folder, scanned with
  the redactor's rules (one source of truth for what a secret is), and GitHub's
  size limits. ``sitegen check-site`` runs it alone; :mod:`sitegen.publish.scan` reads
  and scans one file.
* :mod:`sitegen.publish.address`: the GitHub Pages address of a repository's remote.
* :mod:`sitegen.commands.deploy`: build, gate, then commit the folder as the tip of
  ``gh-pages`` with plain ``git`` plumbing, and push.
"""
