"""The model zoo: architectures of `transformers` and `timm` built from small
configurations (:mod:`dlc.zoo.catalog`), checked through each frontend
against PyTorch eager (:mod:`dlc.zoo.check`); ``python -m dlc.zoo`` runs them
all and writes docs/zoo.md."""
