"""Turns a fresh moto_server into an S3/STS that checks every signature.

    python moto_setup.py http://127.0.0.1:PORT

moto starts with access control off (INITIAL_NO_AUTH_ACTION_COUNT unset is
infinite). This creates, unauthenticated, an IAM user `lakegate` whose
inline policy allows everything and an access key for it, and the role
`lakegate-tables` (ROLE_ARN, moto's account 123456789012) that the user may
assume, with S3 access: examples/storage's vended_credentials role; then it sets
moto's count of unauthenticated actions to 0 (POST /moto-api/reset-auth,
moto's documented switch for INITIAL_NO_AUTH_ACTION_COUNT in server mode),
after which every request's SigV4 signature is verified against that key.
It then proves it, and exits non-zero when moto does not refuse:

  - a request signed with the wrong secret   -> 403 SignatureDoesNotMatch
  - a request signed with an unknown key id  -> 403 InvalidAccessKeyId
  - an unsigned request                      -> refused: moto 5.2.6 answers
    500 (its access check raises KeyError on the missing Authorization
    header) where AWS answers 403; either way nothing is served or stored
  - a request signed with the right key      -> 200
  - AssumeRole of the role with the right key -> temporary keys that sign

On success it prints one line, the URL the Go tests read as LAKEGATE_TEST_S3:
http://<key id>:<secret, percent-encoded>@127.0.0.1:PORT (region us-east-1).
"""

import json
import sys
import urllib.error
import urllib.parse
import urllib.request

import boto3
import botocore.config
import botocore.exceptions

REGION = "us-east-1"
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
ROLE = "lakegate-tables"
ROLE_ARN = f"arn:aws:iam::123456789012:role/{ROLE}"
# Who may assume the role: any principal (moto 5.2.6 refused AssumeRole with
# the account root as the trusted principal), i.e. the gateway's user.
TRUST = {"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
ROLE_POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}


def client(service, endpoint, key_id, secret):
    return boto3.client(
        service, endpoint_url=endpoint, region_name=REGION,
        aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )


def error_code(call):
    try:
        call()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200


def main(endpoint):
    # Access control is off here: any key signs these three calls.
    iam = client("iam", endpoint, "setup", "setup")
    iam.create_user(UserName="lakegate")
    iam.put_user_policy(UserName="lakegate", PolicyName="all", PolicyDocument=json.dumps(POLICY))
    key = iam.create_access_key(UserName="lakegate")["AccessKey"]
    key_id, secret = key["AccessKeyId"], key["SecretAccessKey"]
    role = iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]
    if role["Arn"] != ROLE_ARN:
        sys.exit(f"moto named the role {role['Arn']}, not {ROLE_ARN} (examples/storage's default)")
    iam.put_role_policy(RoleName=ROLE, PolicyName="s3", PolicyDocument=json.dumps(ROLE_POLICY))

    req = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
                                 headers={"Content-Type": "text/plain"})
    urllib.request.urlopen(req).read()

    good = client("s3", endpoint, key_id, secret)
    problems = []
    bucket = "moto-setup-check"
    if error_code(lambda: good.create_bucket(Bucket=bucket)) != (None, 200):
        problems.append("the right key could not create a bucket")
    checks = [
        ("wrong secret", client("s3", endpoint, key_id, secret + "x"), "SignatureDoesNotMatch"),
        ("unknown key id", client("s3", endpoint, "AKIAUNKNOWNLAKEGATE0", secret), "InvalidAccessKeyId"),
    ]
    for what, c, want in checks:
        code, status = error_code(lambda: c.list_objects_v2(Bucket=bucket))
        if (code, status) != (want, 403):
            problems.append(f"{what}: got {code} {status}, want {want} 403")
    good.put_object(Bucket=bucket, Key="k", Body=b"secret")
    for method, data in (("GET", None), ("PUT", b"overwritten")):
        req = urllib.request.Request(f"{endpoint}/{bucket}/k", data=data, method=method)
        try:
            urllib.request.urlopen(req).read()
            problems.append(f"unsigned {method}: got 200, want a refusal")
        except urllib.error.HTTPError as e:
            if e.code not in (403, 500):
                problems.append(f"unsigned {method}: got {e.code}, want 403 (AWS) or 500 (moto)")
    if good.get_object(Bucket=bucket, Key="k")["Body"].read() != b"secret":
        problems.append("an unsigned PUT changed an object")
    assumed = client("sts", endpoint, key_id, secret).assume_role(
        RoleArn=ROLE_ARN, RoleSessionName="moto-setup-check")["Credentials"]
    temp = boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=assumed["AccessKeyId"], aws_secret_access_key=assumed["SecretAccessKey"],
                        aws_session_token=assumed["SessionToken"],
                        config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    if error_code(lambda: temp.get_object(Bucket=bucket, Key="k")) != (None, 200):
        problems.append("the role's temporary keys could not read")
    good.delete_object(Bucket=bucket, Key="k")
    # The bucket stays: moto keeps tracking the deleted key, and its state
    # dump (/moto-api/data.json, where interop/storage/vended.py reads the
    # session policies STS was given) fails on a key whose bucket is gone.
    # An empty bucket shows deleting one works.
    if error_code(lambda: good.create_bucket(Bucket=bucket + "-empty")) != (None, 200) or \
            error_code(lambda: good.delete_bucket(Bucket=bucket + "-empty")) != (None, 200):
        problems.append("the right key could not create and delete a bucket")
    if problems:
        sys.exit("moto does not check signatures as the storage tests need: " + "; ".join(problems))

    u = urllib.parse.urlsplit(endpoint)
    creds = urllib.parse.quote(key_id, safe="") + ":" + urllib.parse.quote(secret, safe="")
    print(f"{u.scheme}://{creds}@{u.netloc}")


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"))
