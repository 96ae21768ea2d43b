"""fkeras.datasets: `digits` ships inside the package; mnist, fashion_mnist, cifar10 and imdb
download into the Keras cache (`$KERAS_HOME` or ~/.keras) through `fkeras.utils.get_file`."""

from fkeras.datasets import cifar10, digits, fashion_mnist, imdb, mnist

__all__ = ["cifar10", "digits", "fashion_mnist", "imdb", "mnist"]
