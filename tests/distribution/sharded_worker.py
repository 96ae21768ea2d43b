"""One process of the sharded-update tests: `python sharded_worker.py SCENARIO OUTDIR`, under
`mpiexec -n 2` or alone. Each rank saves its weights, its optimizer's variables (Keras
order), `iterations` and which path its step took to OUTDIR/<scenario>_rank<r>_of<n>.npz.

Scenarios:
  <optimizer name>  a model of 83 trainable parameters (not divisible by 2 or by 16),
                    6 epochs of 3 steps (the last batch has 5 of 21 rows), that optimizer.
  tiny              Adam on a model of 6 parameters: rank 0's slice is empty.
  clipnorm          Adam(clipnorm=1.0): not sharded (norms need whole variables).
  lamb              Lamb: not sharded (per-variable trust ratios).
  detach            Adam under DataParallel, then the distribution is turned off: each
                    rank's parameters and slots become its own again at once (rank 1 zeroes
                    its slots, rank 0's stay) and a local step trains only on the rank's own
                    data.
"""

import os
import sys

import numpy as np

import fkeras
from fkeras import layers

N_ROWS, BATCH = 21, 8  # 2 full steps and one of 5 rows per epoch

OPTIMIZERS = {
    "sgd_momentum": lambda: fkeras.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
    "adam": lambda: fkeras.optimizers.Adam(0.01),
    "adam_amsgrad": lambda: fkeras.optimizers.Adam(0.01, amsgrad=True),
    "adamw": lambda: fkeras.optimizers.AdamW(0.01, weight_decay=0.05),
    "adamax": lambda: fkeras.optimizers.Adamax(0.01),
    "adagrad": lambda: fkeras.optimizers.Adagrad(0.05),
    "adadelta": lambda: fkeras.optimizers.Adadelta(1.0),
    "rmsprop": lambda: fkeras.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
    "nadam": lambda: fkeras.optimizers.Nadam(0.01),
    "lion": lambda: fkeras.optimizers.Lion(0.003),
    "ftrl": lambda: fkeras.optimizers.Ftrl(0.05, l1_regularization_strength=0.01),
    "adam_clipvalue_losscale": lambda: fkeras.optimizers.Adam(0.01, clipvalue=0.05,
                                                              loss_scale_factor=8.0),
    "loss_scale": lambda: fkeras.optimizers.LossScaleOptimizer(fkeras.optimizers.Adam(0.01)),
    "clipnorm": lambda: fkeras.optimizers.Adam(0.01, clipnorm=1.0),
    "lamb": lambda: fkeras.optimizers.Lamb(0.01),
}


def data(seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N_ROWS, 5)).astype("float32")
    y = (x[:, :1] - 0.5 * x[:, 1:2] + 0.1 * rng.normal(size=(N_ROWS, 1))).astype("float32")
    return x, y


def model(optimizer, tiny=False):
    inputs = fkeras.Input(shape=(5,))
    if tiny:
        outputs = layers.Dense(1)(inputs)  # 6 parameters
    else:
        h = layers.Dense(7, activation="tanh")(inputs)  # 35 + 7
        outputs = layers.Dense(1)(layers.Dense(5, use_bias=False)(h))  # 35, then 5 + 1
    m = fkeras.Model(inputs, outputs)
    m.compile(optimizer=optimizer, loss="mse")
    return m


def main(scenario, outdir):
    fkeras.distribution.initialize()
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
    rank, size = fkeras.distribution.process_rank(), fkeras.distribution.num_processes()
    fkeras.utils.set_random_seed(11)
    x, y = data()
    m = model(OPTIMIZERS["adam" if scenario in ("detach", "tiny") else scenario](),
              tiny=scenario == "tiny")
    m.fit(x, y, batch_size=BATCH, epochs=6, shuffle=True, verbose=0)
    opt = m.optimizer
    inner = getattr(opt, "inner_optimizer", opt)
    out = {"sharded": np.array(bool(getattr(inner, "_fk_sharded", None)))}
    if scenario == "detach":
        fkeras.distribution.set_distribution(None)
        out["detached_at_once"] = np.array(getattr(opt, "_fk_sharded", None) is None)
        comm = fkeras.distribution.get_communicator()
        # A local step (each rank its own rows) moves the slots back to private buffers.
        m.fit(x[rank::2], y[rank::2], batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
        out["detached"] = np.array(getattr(opt, "_fk_sharded", None) is None)
        comm.barrier()
        if rank == 1:
            for v in opt.variables[2:]:
                v.assign(np.zeros(v.shape, v.dtype))
        comm.barrier()
    out["iterations"] = np.array(int(opt.iterations.numpy()))
    for i, w in enumerate(m.weights):
        out[f"w{i}"] = np.asarray(w.numpy())
    for i, v in enumerate(opt.variables):
        out[f"o{i}"] = np.asarray(v.numpy())
    np.savez(os.path.join(outdir, f"{scenario}_rank{rank}_of{size}.npz"), **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
