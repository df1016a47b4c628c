"""A real S3 API for the tests: moto's standalone server (`moto[server]`) on a free loopback port, with a
fresh bucket per test. Never a mock inside the process: the storage speaks HTTP to it as to any bucket."""

import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import boto3

from .realtime.servers import free_port, listening, stop

CREDENTIALS = {"aws_access_key_id": "tracker-tests", "aws_secret_access_key": "tracker-tests-secret",
               "region_name": "us-east-1"}


class MotoServer:
    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "MotoServer":
        program = Path(sys.executable).parent / "moto_server"
        self.process = subprocess.Popen([str(program), "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not listening(self.process, self.port):
            stop(self.process)
            raise RuntimeError(f"moto_server did not listen on {self.port}")
        return self

    def __exit__(self, *exc_info) -> None:
        stop(self.process)

    def client(self):
        return boto3.client("s3", endpoint_url=self.url, **CREDENTIALS)

    def new_bucket(self) -> "Bucket":
        bucket = Bucket(f"tracker-{uuid.uuid4().hex[:16]}", self)
        self.client().create_bucket(Bucket=bucket.name)
        return bucket


@dataclass(frozen=True)
class Bucket:
    name: str
    server: MotoServer

    def keys(self) -> list[str]:
        listing = self.server.client().list_objects_v2(Bucket=self.name)
        return sorted(item["Key"] for item in listing.get("Contents", []))

    def read(self, key: str) -> bytes:
        return self.server.client().get_object(Bucket=self.name, Key=key)["Body"].read()

    def env(self) -> dict[str, str]:
        """The variables that put a server process's stored files in this bucket (README, "Production")."""
        return {"AWS_STORAGE_BUCKET_NAME": self.name, "AWS_S3_ENDPOINT_URL": self.server.url,
                "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
                "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
                "AWS_S3_REGION_NAME": CREDENTIALS["region_name"]}

    def settings(self) -> dict:
        """The same, as the Django settings config/settings.py derives from them."""
        return {"STORAGES": {"default": {"BACKEND": "attachments.storage.BucketStorage"}},
                **self.env()}
