"""Publishing a built site: the gate (:mod:`~sitegen.publish.gate`, one file read by
:mod:`~sitegen.publish.scan`) and the Pages address (:mod:`~sitegen.publish.address`);
``gh-deploy`` itself is :mod:`sitegen.commands.deploy`.
"""
