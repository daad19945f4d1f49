# Splits the samples of `perf script -F tid,ip,sym` (a call-graph profile of a
# replication pull) into categories: each sample goes to the first category whose
# pattern matches any frame of its stack (most specific first). At 1000 Hz one
# sample is 1 ms of CPU, so with 100 000 documents 1 sample = 0.01 µs per document.
# Usage: python3 pull-categories.py PROFILE.txt [DOCUMENTS] [MS_PER_SAMPLE]
import sys, re, collections
cats = [
 ("conflict monitor", r"ConflictMonitor"),
 ("receiver revsDiff/changes", r"revsDiff|RevisionReceiverC13handleChanges|RevisionReceiverC7missing"),
 ("receiver updatePull/finish", r"updatePull|RevisionReceiverC6finish"),
 ("sender feed (changesForSending)", r"changesForSending|ChangesSenderC8readPage"),
 ("receiver parse rev", r"parseRev|parseAll"),
 ("receiver prepare", r"prepareAll|DocumentStoreAAC7prepare"),
 ("wal checkpoint", r"sqlite3WalCheckpoint"),
 ("COMMIT", r"GRDB8DatabaseC6commit|sqlite3VdbeHalt"),
 ("store apply/insert", r"DocumentStoreAAC5apply|insertNew|DocumentStoreAAC6commit"),
 ("receiver inserted/respond", r"RevisionReceiverC8inserted|BLIPConnectionC7respond"),
 ("sender sendRevs", r"sendRevs|revMessage|sendRequests"),
 ("sender other", r"ChangesSender"),
 ("BLIP reader", r"BLIPConnectionC8readLoop|BLIPConnectionC7receive"),
 ("BLIP writer", r"BLIPConnectionC9writeLoop|WebSocketLinkC4send"),
 ("NIO", r"NIOPosix|NIOCore"),
 ("GRDB other", r"GRDB"),
 ("swift task switching", r"swift_task_switch|swift_job_run"),
]
cre = [(n, re.compile(p)) for n,p in cats]
counts = collections.Counter(); total=0
stack=[]
def flush():
    global total
    if not stack: return
    total+=1
    s="\n".join(stack)
    for n,c in cre:
        if c.search(s): counts[n]+=1; return
    # leaf-based fallback
    counts["other: "+(stack[0].split()[-1][:60] if stack else "?")]+=1
for line in open(sys.argv[1]):
    if line.startswith("\t"): stack.append(line.strip())
    elif line.strip()=="" : flush(); stack=[]
    else: flush(); stack=[]
flush()
docs=float(sys.argv[2]) if len(sys.argv)>2 else 100000
ms=float(sys.argv[3]) if len(sys.argv)>3 else 1.0  # ms per sample
print("total samples", total, "=> %.1f us/doc"%(total*ms*1000/docs))
other=0
for n,c in counts.most_common():
    if n.startswith("other:"): other+=c; continue
    print("%-36s %6d %5.1f%% %6.1f us/doc"%(n,c,100*c/total,c*ms*1000/docs))
print("%-36s %6d %5.1f%% %6.1f us/doc"%("other (unattributed)",other,100*other/total,other*ms*1000/docs))
for n,c in counts.most_common():
    if n.startswith("other:") and c>total*0.004: print("   ",n,c)
