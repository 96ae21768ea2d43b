"""fkeras.callbacks: the Keras callback API and the standard callbacks."""

from fkeras.callbacks.backup_and_restore import BackupAndRestore
from fkeras.callbacks.callback import Callback
from fkeras.callbacks.callback_list import CallbackList
from fkeras.callbacks.csv_logger import CSVLogger
from fkeras.callbacks.early_stopping import EarlyStopping
from fkeras.callbacks.history import History
from fkeras.callbacks.lambda_callback import LambdaCallback
from fkeras.callbacks.learning_rate_scheduler import LearningRateScheduler
from fkeras.callbacks.model_checkpoint import ModelCheckpoint
from fkeras.callbacks.progbar_logger import ProgbarLogger
from fkeras.callbacks.reduce_lr_on_plateau import ReduceLROnPlateau
from fkeras.callbacks.remote_monitor import RemoteMonitor
from fkeras.callbacks.swap_ema_weights import SwapEMAWeights
from fkeras.callbacks.tensorboard import TensorBoard  # imports `tensorboard` when constructed
from fkeras.callbacks.terminate_on_nan import TerminateOnNaN


__all__ = ["Callback", "CallbackList", "CSVLogger", "EarlyStopping", "History",
           "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger",
           "ReduceLROnPlateau", "TensorBoard", "TerminateOnNaN",
           "RemoteMonitor", "SwapEMAWeights", "BackupAndRestore"]
