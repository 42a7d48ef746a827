"""Callbacks: the only way the fit loop talks to the outside."""
from minikeras.callbacks.callback import Callback, CallbackList  # noqa: F401
from minikeras.callbacks.history import History  # noqa: F401
from minikeras.callbacks.progbar_logger import ProgbarLogger  # noqa: F401
from minikeras.callbacks.csv_logger import CSVLogger  # noqa: F401
from minikeras.callbacks.early_stopping import EarlyStopping  # noqa: F401
from minikeras.callbacks.lambda_callback import LambdaCallback  # noqa: F401
from minikeras.callbacks.learning_rate_scheduler import LearningRateScheduler  # noqa: F401
from minikeras.callbacks.model_checkpoint import ModelCheckpoint  # noqa: F401
from minikeras.callbacks.reduce_lr_on_plateau import ReduceLROnPlateau  # noqa: F401
from minikeras.callbacks.terminate_on_nan import TerminateOnNaN  # noqa: F401
from minikeras.callbacks.backup_and_restore import BackupAndRestore  # noqa: F401
from minikeras.callbacks.scalar_logger import ScalarLogger  # noqa: F401
from minikeras.callbacks.tensorboard import TensorBoard  # noqa: F401
from minikeras.callbacks.swap_ema_weights import SwapEMAWeights  # noqa: F401
from minikeras.callbacks.remote_monitor import RemoteMonitor  # noqa: F401
