#!/usr/bin/env python3
"""Google's own Cloud Storage client (google-cloud-storage, pinned by tests/gcs/requirements.txt)
as the tests' independent client of a GCS emulator: it uploads what ferry must read and lists and
downloads what ferry wrote. STORAGE_EMULATOR_HOST must point at the emulator; the client is then
anonymous, as it is against any emulator.

  gcs_client.py upload DIR BUCKET PREFIX     every file below DIR as PREFIX/<relative path>
                                             (the bucket is created when missing); prints the
                                             number of files
  gcs_client.py list BUCKET PREFIX           one "name size crc32c md5" line per object, by name
  gcs_client.py download BUCKET PREFIX DIR   every object below PREFIX/ into DIR/<rest of name>,
                                             each checked by the client against the object's
                                             stored checksum; prints the number of files
"""
import os
import sys

from google.cloud import storage


def client():
    if not os.environ.get("STORAGE_EMULATOR_HOST"):
        sys.exit("gcs_client.py: STORAGE_EMULATOR_HOST is not set")
    return storage.Client(project="ferry-test")


def upload(directory, bucket_name, prefix):
    c = client()
    bucket = c.lookup_bucket(bucket_name) or c.create_bucket(bucket_name)
    count = 0
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, directory).replace(os.sep, "/")
            bucket.blob(f"{prefix}/{rel}" if prefix else rel).upload_from_filename(path)
            count += 1
    print(count)


def list_objects(bucket_name, prefix):
    for blob in client().list_blobs(bucket_name, prefix=prefix):
        print(blob.name, blob.size, blob.crc32c or "-", blob.md5_hash or "-")


def download(bucket_name, prefix, directory):
    prefix = prefix.rstrip("/") + "/" if prefix else ""
    count = 0
    for blob in client().list_blobs(bucket_name, prefix=prefix):
        path = os.path.join(directory, blob.name[len(prefix):])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        blob.download_to_filename(path, checksum="auto")
        count += 1
    print(count)


def main(argv):
    commands = {"upload": (upload, 3), "list": (list_objects, 2), "download": (download, 3)}
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        sys.exit(__doc__)
    function, _ = commands[argv[1]]
    function(*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
