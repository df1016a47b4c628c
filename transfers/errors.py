class TransferFailed(Exception):
    """The job cannot go on; the message says where and what ("cards[12].idList: no such list")."""


class Superseded(Exception):
    """The job was handed to another run meanwhile (its process was presumed dead): this run records nothing."""
