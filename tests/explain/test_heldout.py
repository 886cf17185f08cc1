"""The held-out corpora (tests/fixtures/errors-heldout/*.yaml): real error texts collected after
the catalogue was built and scored once before anything was changed for them. Recall is the
share of positives whose first environment cause is the one the thread confirmed; a negative
(OOM, a bug in the program's code, an unrelated failure) must get no environment cause with
confidence exact or likely. Prints every miss; holds the figures docs/doctor.md gives.

heldout.yaml   round 1 (63 texts): 72.5 % scored once before any change for them, then 90.2 %
               after the changes that scoring prompted (no longer out-of-sample); 47/51 after the
               ninth round relabelled one `other:` cause that got an id (ptxas-too-old); 48/51 with
               the eleventh round's fallback from the text's keys (in-sample).
heldout2.yaml  round 2 (78 texts, 49 positives): 28/49 = 57.1 % scored once before any change
               for them, and 5 of 29 negatives answered with a confident environment cause;
               34/49 = 69.4 % and 2 of 29 after the general changes that scoring prompted (no
               longer out-of-sample; 9 positives have causes no id names, so 40/49 is the most);
               then 39/49 = 79.6 % and 0 of 29 after the causes read from the emitters for 7 of
               those 9 (relabelled, `was:` in the file) and two general rules (in-sample).
heldout3.yaml  round 3 (61 texts, 40 positives, 21 negatives), collected after those changes:
               23/40 = 57.5 % scored once before any change for them, and 0 of 21 negatives
               answered with a confident environment cause (7 positives have no id: 33/40 at most);
               28/40 = 70.0 % after the general changes that scoring prompted (in-sample);
               29/40 after the ninth round relabelled one `other:` cause that got an id.
heldout4.yaml  round 4 (75 texts, 50 positives, 25 negatives), collected while the catalogue was
               rebuilt from the emitters and not scored by its collector; scored once, after
               that catalogue work merged (e82f0fd): 40/50 = 80.0 % recall, 0 of 25 negatives
               answered with a confident environment cause (the out-of-sample figure); then
               46/50 = 92.0 % and 0 of 25 after the general changes its misses prompted
               (in-sample; tests/explain/test_emitter_formats.py); 47/50 with the eleventh round's
               key fallback (bench/explain_cv.py: also without this round). A next round goes into
               UNSCORED first (scored only with ENVCHECK_SCORE_HELDOUT4=1) and joins BARS at
               what it reaches.
heldout5.yaml  round 5 (72 texts, 46 positives, 26 negatives), collected after heldout4 was
               scored and not run through `explain` by its collector; scored once after the
               fixes heldout4 prompted merged (71faddf): 39/46 = 84.8 % recall (one positive has
               no cause id: 45/46 at most), 0 of 26 negatives confident (the out-of-sample
               figure); then 45/46 = 97.8 % and 0 of 26 after three general classes read from
               their emitters (in-sample; tests/explain/test_emitter_extension_ops.py): an
               extension's compiled ops missing at run time, cuDNN's loader not finding a
               sub-library (Windows, cuDNN 9), DeepSpeed refusing a toolkit other than torch's.
heldout6.yaml  round 6 (87 texts, 65 positives, 22 negatives), collected after heldout5 was
               scored, by the same rules, not run through `explain` by its collector, while
               heldout5's classes were being added by someone who never read it; scored once
               after they merged (9d85a87): 42/65 = 64.6 % recall (four positives have no cause
               id: 61/65 at most), 0 of 22 negatives confident (the out-of-sample figure);
               then 58/65 = 89.2 % and 0 of 22 after general classes read from their emitters
               (in-sample; tests/explain/test_emitter_round6.py): Docker's daemon not knowing the
               nvidia runtime, features gated on compute capability (and catalogued messages
               matched without their final period), torchvision's own checks of its ops, nvcc
               refusing an arch a GPU has, NVML's permission error, nvidia-smi missing or unable
               to reach the driver, torch's headers refusing the C++ dialect, numba's unknown
               cuInit code, NCCL's own version check, a std:: symbol undefined. 59/65 after the
               ninth round relabelled one `other:` cause that got an id (mig-one-device-per-process).
heldout7.yaml  round 7 (86 texts, 64 positives, 22 negatives; collected after heldout6 was scored,
               by the same rules; not run through `explain` by its collector, while heldout6's
               classes were added by someone who never read it); scored once after they merged
               (9bf9739): 41/64 = 64.1 % recall (six positives have no cause id: 58/64 at most),
               and 4 of 22 negatives answered with a confident cause (the out-of-sample figure);
               then 55/64 = 85.9 % and 0 of 22 (in-sample) after the words behind the four were
               mended in general and classes read from their emitters added (/dev/shm in
               MapAllocator's and a SIGBUS's words, TensorFlow's Windows cudart DLL and ld's
               DT_NEEDED warning, nvidia-docker 1.0's driver check, the CUDA images' no-driver
               warning, PyG's CUDA check, pycuda's cuInit, TensorFlow's no-kernel-module
               diagnosis, torch's or JAX's CUDA libraries of another release, ld missing a
               cudart symbol libtorch_cuda needs, CPython's Windows DLL load failure, nvcc's
               front end on a newer gcc's intrinsics; tests/explain/test_emitter_round7.py).
               58/64 after the ninth round (families of emitters read from their sources,
               tests/explain/test_emitter_round9.py; two `other:` causes got an id and were
               relabelled, was: in the file), in-sample; 59/64 after the tenth round relabelled
               one more (hostname-resolution).
heldout8.yaml  round 8 (86 texts, 65 positives, 21 negatives; collected after heldout7 was scored,
               by the same rules; not run through `explain` by its collector): scored once at
               0917e07, after the ninth round merged, at 33/65 = 50.8 % with 2 of 21 negatives
               answered with a confident cause (out-of-sample). 4 misses are `other:` labels
               whose cause got an id in the ninth round, after collection, and that explain now
               names (python-headers-missing, host-compiler-missing); they count as misses.
               Then 53/65 and 0 of 21 (in-sample) after the tenth round (tests/explain/
               test_emitter_round10.py): the words behind the confident negatives mended in
               general, a new id (hostname-resolution), `other:` labels that have an id and
               labels that are word for word another id's definition relabelled (was: kept),
               families of emitters for what answered nothing.
heldout9.yaml  round 9 (91 texts, 67 positives, 24 negatives; collected after heldout8 was
               collected, by the same rules; not run through `explain` by its collector): scored
               once with heldout8, at 38/67 = 56.7 % with 2 of 24 negatives confident
               (out-of-sample; 1 more `other:` named by a ninth-round id, no-wheel-for-platform);
               then 51/67 and 0 of 24 (in-sample) after the tenth round, as heldout8.
heldout10.yaml round 10 (85 texts, 64 positives, 21 negatives: 61 collected after heldout8
               and heldout9 were scored, 24 more in a top-up by the same rules; not run through
               `explain` by either collector): scored once at e74c745, after the eleventh
               round (the key fallback) merged, at 29/64 = 45.3 % with 3 of 21 negatives
               confident (out-of-sample; 12 positives are `other:`: 29/52 = 55.8 % of those with
               an id); the same without the fallback (65a3210).
heldout11.yaml round 11 (85 texts, 62 positives, 23 negatives; collected after heldout10, by
               the same rules, from 72 new queries; not run through `explain` by its collector):
               scored once with heldout10, at 35/62 = 56.5 % with 0 of 23 negatives confident
               (out-of-sample; 10 positives are `other:`: 35/52 = 67.3 %); 28/62 without the
               eleventh round's fallback (65a3210), the fallback's first out-of-sample gain.
               Both then read for the twelfth round (tests/explain/test_emitter_round12.py):
               heldout10 41/65 (two relabelled, was: in the file; one a negative whose thread's
               cause is invalid-device-ordinal's definition) and heldout11 42/62, no negative of
               either confident (in-sample; the key table learnt from them too).
heldout12.yaml round 12 (84 texts, 64 positives, 20 negatives; collected after heldout11, by
               the same rules, from 144 new queries; not run through `explain` by its
               collector): scored once at 7d90ef7, after the twelfth round merged, at 38/64 =
               59.4 % with 0 of 20 negatives confident (out-of-sample; 6 positives are
               `other:`: 38/58 = 65.5 %); 41/64 with the key table learnt from it, 45/64 after
               the thirteenth round (tests/explain/test_emitter_round13.py; in-sample).
heldout13.yaml round 13 (82 texts, 62 positives, 20 negatives; collected after heldout12, by
               the same rules, from 128 new queries; not run through `explain` by its
               collector): scored once at 65ed21e, after the thirteenth round merged, at 27/62
               = 43.5 % with 0 of 20 negatives confident (out-of-sample; 13 positives are
               `other:`: 27/49 = 55.1 %). Then read for the fourteenth round (tests/explain/
               test_emitter_round14_builds.py, test_emitter_round14_dist.py): 50/61 and 0 of 21
               negatives confident (in-sample; labels set from the ids' definitions and seven
               `other:` causes that got an id relabelled, was: in the file).
heldout14.yaml round 14 (73 texts, 54 positives, 19 negatives, from 82 new queries; collected after
               heldout13 was scored, by the same rules, not run through `explain` by its collector;
               scope: single-node PyTorch ecosystem): scored once at 58cf552, after the fourteenth
               round merged, at 17/54 = 31.5 % with 1 of 19 negatives confident (out-of-sample;
               20 positives are `other:`: 17/34 = 50.0 %). Then read for the fifteenth round
               (tests/explain/test_emitter_round15_py.py): 44/54 and 0 of 19 negatives confident
               (in-sample; 16 `other:` causes that got an id relabelled, was: in the file).
heldout15.yaml round 15 (81 texts, 60 positives, 21 negatives; collected after heldout13 was
               scored, alongside heldout14, by the same rules, from 108 new queries; not run
               through `explain` by its collector; scope: multi-node, containers, other
               frameworks): scored once with heldout14, at 30/60 = 50.0 % with 2 of 21 negatives
               confident (out-of-sample; 11 positives are `other:`: 30/49 = 61.2 %); then
               40/61 and 1 of 20 negatives confident after the fifteenth round's systems half
               (in-sample; tests/explain/test_emitter_round15_sys.py): general classes read from
               their emitters, two `other:` causes that got an id and one negative whose text is
               an id's definition relabelled (was: in the file).
heldout16.yaml round 16 (70 texts, 53 positives, 17 negatives, from 224 new queries; collected
               after heldout14 and heldout15 were scored, alongside heldout17, by the same rules,
               not run through `explain` by its collector; owners a-m): scored once at d7705ab, after
               the fifteenth round merged, at 24/53 = 45.3 % with 1 of 17 negatives confident
               (out-of-sample; 11 positives are `other:`: 24/42 = 57.1 %); then 33/53 and 1 of 17 negatives
               confident after the sixteenth round read it (in-sample; tests/explain/
               test_emitter_round16_a.py).
heldout17.yaml round 17 (61 texts, 47 positives, 14 negatives, from 188 new queries; collected
               after heldout14 and heldout15 were scored, alongside heldout16, by the same rules,
               not run through `explain` by its collector; owners n-z): scored once with heldout16,
               at 19/47 = 40.4 % with 0 of 14 negatives confident (out-of-sample; 12 positives
               are `other:`: 19/35 = 54.3 %); then 27/47 and 0 of 14 negatives confident after the
               sixteenth round read it (in-sample; tests/explain/test_emitter_round16_b.py; one
               `other:` cause that got an id relabelled, was: in the file).
heldout18.yaml round 18 (104 texts, 73 positives, 31 negatives, from 273 new queries; collected
               after heldout16 and heldout17 were scored, by the same rules, by two collectors who
               split the threads by owner (0-9, a-f, n-s: 62 texts; g-m, t-z: 42 texts, too few
               for a round of their own, so folded in as the round's second part), neither
               running `explain`): scored once at 110dd9e, after the sixteenth round merged, at
               20/73 = 27.4 % with 3 of 31 negatives confident (out-of-sample; 20 positives are
               `other:`: 20/53 = 37.7 %); then 32/74 and 2 of 30 negatives confident after the
               seventeenth round read it (in-sample; tests/explain/test_emitter_round17_a.py and
               _b.py; tensorflow#4002, collected as a negative, relabelled gpu-too-old by the
               id's definition, was: in the file).
eighteenth round (recurring `other:` causes across the rounds; tests/explain/
               test_emitter_round18_ids.py): five ids read from their emitters
               (video-codec-libs-missing, mpi-not-cuda-aware, gpu-reset-in-use, opencl-no-platform,
               rdma-device-unavailable) and eighteen labels set to an id's definition, two
               `other:` TensorRT engines built elsewhere made negatives (was: in the files):
               heldout8 55/65, heldout9 55/67, heldout10 45/63, heldout12 47/64, heldout18 35/74,
               the rest unchanged (in-sample).
heldout19.yaml round 19 (72 texts, 50 positives, 22 negatives; collected after heldout18 was
               scored, by the same rules, by two collectors who split the threads by owner (0-9,
               a-m: 35 texts; n-z: 37, the second part), neither running `explain`; 12 of them
               gathered a session earlier, until the search tool's budget ran out): scored once at
               b4f2f93, after the eighteenth round merged, at 27/50 = 54.0 % with 4 of 22
               negatives confident (out-of-sample; 13 positives are `other:`: 27/37 = 73.0 %);
               part a read by the nineteenth round: 31/51 and 3 of 21 negatives confident
               (in-sample; tests/explain/test_emitter_round19_a.py; dgl#5547 and CUDA.jl#609,
               a negative, relabelled by the ids' definitions, was: in the file).
               Part b (n-z) read: 29/49 and 2 of 23 negatives confident (in-sample;
               tests/explain/test_emitter_round19_b.py; yolov5-tensorrt#7 a negative, was: in the file).
               Both parts merged: 33/50 and 1 of 22 negatives confident (in-sample).
heldout20.yaml round 20 (63 texts, 46 positives, 17 negatives; collected after heldout19 was
               scored, by the same rules, by two collectors who split the threads by owner (0-9,
               a-m: 40 texts, 6 of them a top-up when the round was short; n-z: 23, the second
               part), neither running `explain`): scored once at dac7536, after the nineteenth
               round merged, at 24/46 = 52.2 % with 1 of 17 negatives confident (out-of-sample;
               10 positives are `other:`: 24/36 = 66.7 %); part a read by the twentieth
               round: 29/46 and 1 of 17 negatives confident (in-sample;
               tests/explain/test_emitter_round20_a.py; no relabels).
               Part b (n-z) read: 28/46 and 0 of 17 negatives confident (in-sample;
               tests/explain/test_emitter_round20_b.py; tiny-cuda-nn#434 no-kernel-image, was: in the file).
               Both parts merged: 33/46 and 0 of 17 negatives confident (in-sample).
heldout21.yaml round 21 (74 texts, 53 positives, 21 negatives; collected after heldout19 was read,
               alongside heldout20, by the same rules, by two collectors who split the threads by
               owner (0-9, a-m: 39 texts; n-z: 35, the second part), neither running `explain`):
               scored once at a618545, after the twentieth round merged, at 20/53 = 37.7 % with 3
               of 21 negatives confident (out-of-sample; 13 positives are `other:`: 20/40 = 50.0 %).
               Part a read: 28/54 and 2 of 20 negatives confident (in-sample;
               tests/explain/test_emitter_round21_a.py; Open3D#3583 cuda-lib-missing, was: in the file).
               Part b (n-z) read: 24/53 and 2 of 21 negatives confident (in-sample;
               tests/explain/test_emitter_round21_b.py; NeMo/Speech#842 extension-ops-missing, was: in the file).
               Both parts merged: 32/54 and 1 of 20 negatives confident (in-sample).
heldout22.yaml round 22 (74 texts, 46 positives, 28 negatives; collected after heldout21 was
               scored, by the same rules, by collectors who split the threads by owner (0-9, a-m:
               16 texts, then two top-ups of 17 and 15 by two collectors of a later session; n-z:
               26, the second part), none running `explain`): scored once at 05ebd54, after the
               twenty-first round merged, at 11/46 = 23.9 % with 3 of 28 negatives confident
               (out-of-sample; 13 positives are `other:`: 11/33 = 33.3 %).
               Part a read: 14/46 and 3 of 28 negatives confident (in-sample;
               tests/explain/test_emitter_round22_a.py; tvm#760, #604 torch-not-cuda, was: in the file).
               Part b (n-z) read: 19/46 and 3 of 28 negatives confident (in-sample;
               tests/explain/test_emitter_round22_b.py; Paddle#16630, PaddleClas#1527 cuda-lib-missing,
               was: in the file).
               The first part's top-ups read: 16/46 and 3 of 28 negatives confident (in-sample;
               tests/explain/test_emitter_round22_c.py; no relabels).
               All three merged: 27/46 and 3 of 28 negatives confident (in-sample).
heldout23.yaml round 23 (66 texts, 40 positives, 26 negatives; collected after heldout22 was
               scored, by the same rules, by collectors who split the threads by owner (0-9, a-m:
               19 texts, then top-ups of 15 and 3; n-z: 18, collected as a round-22 top-up that
               came too late, then top-ups of 3 and 8), none running `explain`): scored once at
               30d763f, after the twenty-second round merged, at 13/40 = 32.5 % with 7 of 26
               negatives confident (out-of-sample; 8 positives are `other:`: 13/32 = 40.6 %).
               Part a read: 17/40 and 6 of 26 negatives confident (in-sample;
               tests/explain/test_emitter_round23_a.py; LightGBM#6205 torch-not-cuda, was: in the file).
               Part b (n-z) read: 16/40 and 7 of 26 negatives confident (in-sample;
               tests/explain/test_emitter_round23_b.py; no relabels).
               The first part's top-ups read: 16/40 and 7 of 26 negatives confident (in-sample;
               tests/explain/test_emitter_round23_c.py; no relabels).
               The second part's top-ups read: 15/40 and 5 of 26 negatives confident (in-sample;
               tests/explain/test_emitter_round23_d.py; NVIDIA/TensorRT#51
               [arch-not-compatible, cudnn-execution-failed], was: in the file).
               All four merged: 25/40 and 4 of 26 negatives confident (in-sample).
heldout24.yaml round 24 (69 texts, 37 positives, 32 negatives; collected after heldout23 was
               scored, by the same rules, by two collectors who split the threads by owner (0-9,
               a-m: 41 texts; n-z: 28, the second part), neither running `explain`): scored once
               at 6a7aaaf, after the twenty-third round merged, at 11/37 = 29.7 % with 5 of 32
               negatives confident (out-of-sample; 12 positives are `other:`: 11/25 = 44.0 %).
               Part a1 (texts 1-20) read: 15/37 and 5 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round24_a1.py; no relabels).
               Part a2 (texts 21-41) read: 15/37 and 5 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round24_a2.py; no relabels).
               Part b1 (n-z, texts 1-14) read: 14/37 and 3 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round24_b1.py; no relabels).
               Part b2 (n-z, texts 15-28) read: 13/37 and 5 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round24_b2.py; no relabels).
               All four parts merged: 18/37 and 3 of 32 negatives confident (in-sample).
heldout25.yaml round 25 (73 texts, 41 positives, 32 negatives; collected after heldout23 was
               scored, while heldout24 was being collected and read, by the same rules, by
               collectors who split the threads by owner (0-9, a-m: 39 texts; n-z: 12 + 22, the
               second part), none running `explain`): scored once at 5b42059, after the
               twenty-fourth round merged, at 15/41 = 36.6 % with 2 of 32 negatives confident
               (out-of-sample; 9 positives are `other:`: 15/32 = 46.9 %).
               Part a1 (texts 1-20) read: 19/41 and 2 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round25_a1.py; no relabels).
               Part a2 (texts 21-39) read: 18/41 and 2 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round25_a2.py; gpuRIR#17 [cuda-unknown-error,
               driver-state-stale], was: in the file).
               Parts a1 and a2 merged: 22/41 and 2 of 32 negatives confident (in-sample).
               Part b (n-z) read: 25/41 and 2 of 32 negatives confident (in-sample, with parts a1
               and a2 merged; 18/41 on its own; tests/explain/test_emitter_round25_b.py;
               pytorch_sparse#49 [extension-ops-missing], was: in the file).
               All three merged: 25/41 and 2 of 32 negatives confident (in-sample).
heldout26.yaml round 26 (67 texts, 45 positives, 22 negatives; collected after heldout25 was
               scored, while heldout25 was being read, by the same rules, by collectors who split
               the threads by owner (0-9, a-m: 19 + 19 texts; n-z: 15 + 14, the second part), none
               running `explain`): scored once at 4f9f1e9, after the twenty-fifth round's
               readers merged, at 19/45 = 42.2 % with 0 of 22 negatives confident (out-of-sample;
               9 positives are `other:`: 19/36 = 52.8 %).
               Part c (texts 20-38) read: 24/45 and 0 of 22 negatives confident (in-sample;
               tests/explain/test_emitter_round26_c.py; no relabels).
               Part a (texts 1-19) read: 24/45 and 0 of 22 negatives confident (in-sample;
               tests/explain/test_emitter_round26_a.py; no relabels).
               Part b (n-z, texts 39-67) read: 24/45 and 0 of 22 negatives confident (in-sample;
               tests/explain/test_emitter_round26_b.py; tiny-cuda-nn#284 [system-lib-too-old], was:
               in the file).
               All three parts merged: 32/45 and 0 of 22 negatives confident (in-sample).
heldout27.yaml round 27 (103 texts, 58 positives, 45 negatives; collected after heldout26 was
               scored, by the same rules, by four collectors who split the threads by owner
               (0-9/a-f 19, g-m 23, n-s 40, t-z 21 texts), none running `explain`): scored once
               at 2818658, after the twenty-sixth round's readers merged, at 12/58 = 20.7 % with
               4 of 45 negatives confident (out-of-sample; 23 positives are `other:`: 12/35 =
               34.3 %).
               Part a (0-9/a-f, texts 1-19) read: 16/58 and 3 of 45 negatives confident
               (in-sample; tests/explain/test_emitter_round27_a.py; SparseConvNet#55
               [extension-torch-incompatible], was: package-torch-mismatch).
               Part b (g-m, texts 20-42) read: 14/58 and 4 of 45 negatives confident (in-sample;
               tests/explain/test_emitter_round27_b.py; godot#76524, godot#58621 and gfx#3273
               [other: a GPU without Vulkan], was: gpu-too-old; gpu-jupyter#22
               [nvidia-smi-no-driver, no-driver-found], was: no-driver-found).
               Part c1 (n-s, texts 43-66) read: 17/58 and 4 of 45 negatives confident (in-sample;
               tests/explain/test_emitter_round27_c1.py; Paddle#45209 [cudnn-lib-missing], was:
               in the file).
               Part c2 (n-s, texts 67-82) read: 15/58 and 3 of 45 negatives confident
               (in-sample; tests/explain/test_emitter_round27_c2.py; InsightFace-REST#24
               [driver-too-old, ptx-toolchain-too-new], nvidia-docker#416 [driver-state-stale],
               was: in the file).
               Part d (t-z, texts 83-103) read: 15/58 and 4 of 45 negatives confident (in-sample;
               tests/explain/test_emitter_round27_d.py; no relabels).
               All five parts merged: 29/58 and 2 of 45 negatives confident (in-sample).
heldout28.yaml round 28 (71 texts, 39 positives, 32 negatives; collected after heldout27 was
               scored, while it was being read, by the same rules, by three collectors who split
               the threads by owner (0-9/a-h 20, i-r 25, s-z 26 texts), none running `explain`):
               scored once at bb3f056, after the twenty-seventh round's readers merged, at
               16/39 = 41.0 % with 4 of 32 negatives confident (out-of-sample; 13 positives are
               `other:`: 16/26 = 61.5 %).
               Part a (0-9/a-h, texts 1-20) read: 17/39 and 3 of 32 negatives confident
               (in-sample; tests/explain/test_emitter_round28_a.py; no relabels).
               Part b (i-r, texts 21-45) read: 18/39 and 3 of 32 negatives confident (in-sample;
               tests/explain/test_emitter_round28_b.py; no relabels).
               Part c (s-z, texts 46-71) read: 24/39 and 2 of 32 negatives confident (in-sample,
               on main with parts a, b and toolkit-too-old merged, 20/39 and 2 without it; 20/39
               and 4 on its own from bb3f056; tests/explain/test_emitter_round28_c.py; no
               relabels).
               toolkit-too-old added (tests/explain/test_emitter_toolkit_too_old.py):
               zed-ros-wrapper#423 [toolkit-too-old], was: in the file.
               All three parts and toolkit-too-old merged: 24/39 and 2 of 32 negatives confident
               (in-sample; 24/27 = 88.9 % with a cause id).
heldout29.yaml round 29 (62 texts, 32 positives, 30 negatives; collected after heldout28 was
               scored, while it was being read, by the same rules, by collectors who split the
               threads by owner (0-9/a-h 17, i-r 2 + i-m 11 + n-r 11, s-z 21), none running
               `explain`): scored once at 3823f6e, after the twenty-eighth round's readers
               merged, at 6/32 = 18.8 % with 2 of 30 negatives confident (out-of-sample; 10
               positives are `other:`: 6/22 = 27.3 %).
               Part b (s-z, texts 20-40) read: 9/32 and 2 of 30 negatives confident (in-sample;
               tests/explain/test_emitter_round29_b.py; no relabels).
               Part c (i-r, texts 41-62) read: 10/33 and 1 of 29 negatives confident (in-sample;
               tests/explain/test_emitter_round29_c.py; executor-clip-encoder#7
               [no-kernel-image], was: null (a negative, user-bug)).
               Part a (0-9/a-h, texts 1-19) read: 12/32 and 2 of 30 negatives confident
               (in-sample; 7/32 on main at 917db69 with the key table learnt from it;
               tests/explain/test_emitter_round29_a.py; MNN#2297 [torch-not-cuda], was: other:
               the pip-installed MNN Python package is built without the CUDA backend).
               All three parts merged: 17/33 and 1 of 29 negatives confident (in-sample).
heldout30.yaml round 30 (116 texts, 58 positives, 58 negatives; collected after heldout29 was
               scored, while it was being read, by the same rules, by collectors who split the
               threads by owner (0-9/a-f 21, g-m 34, n-s 43, t-z 18), none running `explain`):
               scored once at d5206bf, after the twenty-ninth round's readers merged, at 13/58 =
               22.4 % with 8 of 58 negatives confident (out-of-sample; 26 positives are
               `other:`: 13/32 = 40.6 %).
               Part a (0-9/a-f, texts 1-21) read: 17/58 and 8 of 58 negatives confident
               (in-sample; 14/58 on main at 3622e8b with the key table learnt from it;
               tests/explain/test_emitter_round30_a.py; Mask2Former#31 [toolkit-torch-mismatch,
               undefined-symbol], was: toolkit-torch-mismatch).
               Part b (g-m, texts 22-55) read: 14/58 and 7 of 58 negatives confident (in-sample;
               tests/explain/test_emitter_round30_b.py; no relabels).
               Part d (t-z, texts 99-116) read: 19/58 and 7 of 58 negatives confident
               (in-sample; 14/58 on main at 3622e8b with the key table learnt from it;
               tests/explain/test_emitter_round30_d.py; no relabels).
               Part c (n-s, texts 56-98) read: 17/58 and 6 of 58 negatives confident (in-sample;
               tests/explain/test_emitter_round30_c.py; mmcv#1380 [extension-ops-missing,
               cudart-lib-missing, cuda-lib-missing], was: [extension-ops-missing,
               cuda-lib-missing]).
               All four parts merged: 25/58 and 4 of 58 negatives confident (in-sample).
heldout31.yaml round 31 (40 texts, 20 positives, 20 negatives; a round SCOPED to texts that name
               PyTorch, collected while heldout30 was scored and read, by the same rules otherwise
               and without the preference for projects no earlier round named, by collectors who
               split the threads by owner (0-9/a-f 9 + 1, g-m 9, n-s 14, t-z 7 + 0) until the
               session's search budget ran out; fewer than the 60 texts issue 21 asks of a
               round), none running `explain`): scored once at 11591e4, after the thirtieth
               round's readers merged, at 8/20 = 40.0 % with 3 of 20 negatives confident
               (out-of-sample; 1 positive is `other:`: 8/19 = 42.1 %).
               Part a (0-9/a-m, texts 1-18) read: 11/20 and 3 of 20 negatives confident
               (in-sample; tests/explain/test_emitter_round31_a.py; LGM#24
               [package-version-refused, package-torch-mismatch], was: package-version-refused).
               Part b (n-z, texts 19-40) read: 12/20 and 3 of 20 negatives confident
               (in-sample; 8/20 on main at e0ec8b9 with the key table learnt from it;
               tests/explain/test_emitter_round31_b.py; pytorch#6310
               [cudnn-version-mismatch, cudnn-execution-failed], was: cudnn-version-mismatch).
               Both parts merged: 15/20 and 3 of 20 negatives confident (in-sample).
heldout32.yaml round 32 (79 texts, 45 positives, 34 negatives; SCOPED like round 31 to texts that
               name PyTorch, by ten collectors who split the threads by owner (0-9/a-c 5, d-f 5 + 8,
               g-h 9, i-m 12 + 4, n-o 5, p-r 15 + 0, s-z 16) until the session's search budget ran
               out, none running `explain`), collected while session 36's catalogue additions were
               made on a branch nobody collecting saw): scored once at fe46cea, right after it was
               joined, at 8/45 = 17.8 % with 3 of 34 negatives confident (out-of-sample; 14
               positives are `other:`: 8/31 = 25.8 %).
               Part a (0-9/a-h, texts 1-27) read: 10/45 and 3 of 34 negatives confident
               (in-sample; tests/explain/test_emitter_round32_a.py; no relabels).
               Part b (i-o, texts 28-48) read: 14/45 and 2 of 34 negatives confident (in-sample;
               tests/explain/test_emitter_round32_b.py; no relabels).
               Part c (p-r, texts 49-63) read: 11/45 and 3 of 34 negatives confident
               (in-sample; tests/explain/test_emitter_round32_c.py; pytorch-scripts#18
               [gpu-too-old, no-kernel-image], was: gpu-too-old; GPT-SoVITS#490
               [cudnn-version-mismatch, cudnn-execution-failed], was: cudnn-version-mismatch).
               Part d (s-z, texts 64-79) read: 15/45 and 3 of 34 negatives confident
               (in-sample; tests/explain/test_emitter_round32_d.py; no relabels).
               All four parts merged: 26/45 and 2 of 34 negatives confident (in-sample).
               mkl-lib-mismatch added (round 35's session): 29/45, 2 of 34 (in-sample;
               tests/explain/test_emitter_mkl.py; DeOldify#504, pytorch#5099 and #1621
               [mkl-lib-mismatch], was: other: (an MKL too new, a cluster's old MKL first, conda's
               MKL not found)).
heldout33.yaml round 33 (45 texts, 27 positives, 18 negatives; SCOPED like rounds 31 and 32 to
               texts that name PyTorch, by eight collectors who split the threads by owner
               (0-9/a-b 4, c 8, d-f 1, g-k 5, l-n 6, o-r 5, s 11, t-z 5) until their context filled
               or the session's search budget ran out, none running `explain`; fewer than the 60
               texts issue 21 asks of a round): scored once at 3d8d456, right after it was
               joined, at 10/27 = 37.0 % with 1 of 18 negatives confident (out-of-sample; 5
               positives are `other:`: 10/22 = 45.5 %; 3 of the 10 are the release table's
               `possible` leads, torch names another release has).
               Part a (0-9/a-k, texts 1-18) read: 14/27 and 1 of 18 negatives confident
               (in-sample; tests/explain/test_emitter_round33_a.py; no relabels).
               Part b (l-z, texts 19-45) read: 16/27 and 1 of 18 negatives confident
               (in-sample; tests/explain/test_emitter_round33_b.py; TensorRT#588
               [cuda-lib-missing], was: other: (libnvinfer_plugin.so.8 not on the loader's path);
               3d-ken-burns#15 [torchvision-undefined-symbol, no-kernel-image], was:
               torchvision-undefined-symbol).
               Both parts merged: 20/27 and 1 of 18 negatives confident (in-sample).
heldout34.yaml round 34, begun and left unfinished (3 texts): threads new to the project held by
               URL alone and taken as they come, a text word for word a held one included (the
               next user's paste); its collectors' 433 queries found nearly every settled thread
               already held before the search budget ran out. Structure-checked, never scored
               until a later session tops it up to a round.
heldout35.yaml round 35 (74 texts, 41 positives, 33 negatives; SCOPED like rounds 31-33 to
               texts that name PyTorch, by the rules of round 33: eight collectors split the threads
               by owner (0-9/a-b 2, c 6 + 1, d-f 8, g-k 9 + 3, l-n 6 + 7, o-r 4 + 9, s 10,
               t-z 5 + 4, the second figure a second-wave collector's where the first stopped early),
               940 queries, none running `explain`): scored once at a0e635b, right after it was
               joined, at 19/41 = 46.3 % with 4 of 33 negatives confident (out-of-sample; 10
               positives are `other:`: 19/31 = 61.3 % with an id).
               mkl-lib-mismatch added after scoring: 21/41 and 4 of 33 negatives confident
               (in-sample; conda#13812 and intel-extension-for-pytorch#561 [mkl-lib-mismatch],
               was: other: (conda's torch missing iJIT_NotifyEvent; a oneAPI MKL lacking a symbol)).
               Part a (texts 1-36) read: 26/41 and 2 of 33 negatives confident (in-sample;
               tests/explain/test_emitter_round35_a.py; no relabels).
               Part b (texts 37-74) read: 27/41 and 3 of 33 negatives confident (in-sample;
               tests/explain/test_emitter_round35_b.py; pytorch/pytorch#85647
               [package-torch-mismatch, torchvision-undefined-symbol], was: package-torch-mismatch
               (torchaudio's own CUDA check, the CUDA variant differing)).
               Both parts merged: 32/41 and 1 of 33 negatives confident (in-sample).
heldout36.yaml round 36 (125 texts, 94 positives, 31 negatives; the first round from FILES in public
               repositories, the search tool's `code` corpus: errors quoted in FAQs, troubleshooting
               pages, cluster docs and people's own notes with the cause or fix that worked, taken BY
               URL ALONE like round 34; five collectors split by symptom area (a 33, b 30, c 18, d 24,
               e 25 entries, 5 taken twice in effect dropped at the join), 189 queries, none running
               `explain`): scored once at 14801ce, the commit that joined it, at 46/94 = 48.9 %
               with 3 of 31 negatives confident (out-of-sample; 28 positives are `other:`: 46/66 =
               69.7 % with an id).
               Its misses with an id read: 55/94 and 3 of 31 negatives confident (in-sample;
               tests/explain/test_emitter_round36.py; no relabels).
               driver-module-in-use added after round 37: 57/94 (in-sample; Scotchman0
               common_issues.md#L45 and chaelin0722 #L57 [driver-module-in-use], was: other:).
               cmake-too-old added after round 38: 59/94 (in-sample; the open3d and Faiss
               builds' CMake refusals [cmake-too-old], was: other:).
heldout37.yaml round 37 (86 texts, 66 positives, 20 negatives; the second round from files, by round
               36's rules, a file round 36 holds passed over; four collectors split by symptom area
               (a 19, b 24, c 23, d 20), 214 queries, none running `explain`, collected after round
               36 was read): scored once at 0eaca80, the commit that joined it, at 33/66 = 50.0 %
               with 0 of 20 negatives confident (out-of-sample; 22 positives are `other:`: 33/44 =
               75.0 % with an id).
               Its misses with an id read: 37/66 and 0 of 20 negatives confident (in-sample;
               tests/explain/test_emitter_round37.py; no relabels).
               driver-module-in-use added: 39/66 (in-sample; huataihuang nvidia_driver.md#L79 and
               wjxpro #L35 [driver-module-in-use], was: other:).
heldout38.yaml round 38 (90 texts, 59 positives, 31 negatives; the third round from files, by rounds
               36 and 37's rules, files of earlier rounds passed over; four collectors split by
               symptom area (a 23, b 21, c 25, d 21), 248 queries, none running `explain`, collected
               after round 37 was read): scored once at c23f709, the commit that joined it, at
               21/59 = 35.6 % with 0 of 31 negatives confident (out-of-sample; 16 positives are
               `other:`: 21/43 = 48.8 % with an id).
               Its misses with an id read: 31/59 and 0 of 31 negatives confident (in-sample;
               tests/explain/test_emitter_round38.py; no relabels).
heldout39.yaml round 39, begun and not yet a round (46 texts, 27 positives, 19 negatives): the fourth
               collection from files, by rounds 36-38's rules, found the code corpus mined out
               (most named files held already); structure-checked, never run through explain until
               topped up to 60 or more from another source and scored once.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from envcheck.explain.match import explain, top_environment_cause
from envcheck.explain.signatures import signatures

HELDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "errors-heldout"
# libyaml where PyYAML has it: the rounds are 6 MB, and its own parser took ~25 s of CPU per read of
# them all on CI (gen_keys.read_yaml; every round parses under both, to equal data)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# corpus: (the recall it holds, how many negatives may get a confident environment cause)
BARS = {
    # 46/51 (0.90); 47/51 after the ninth round relabelled an `other:` cause that got an id (was:);
    # 48/51 after the eleventh round's fallback from the text's keys (in-sample: its key table
    # learnt from this round too)
    "heldout.yaml": (48 / 51, 0),
    "heldout2.yaml": (39 / 49, 0),
    # scored once at 23/40; held at the in-sample 28/40 reached after the changes it prompted, 29/40
    # after the ninth round's relabelling of an `other:` cause that got an id (was: in the file)
    "heldout3.yaml": (29 / 40, 0),
    # scored once at 40/50 after the catalogue was rebuilt from the emitters (out-of-sample); held
    # at the in-sample 46/50 reached after the general changes its misses prompted; 47/50 with the
    # eleventh round's key fallback (in-sample, and also with the table built without this round);
    # 46/50 since the table learnt round 38: pytorch#23363's misspelt "unhanled system error" after
    # an NCCL error no longer leads to nccl-system-error from its keys alone
    "heldout4.yaml": (46 / 50, 0),
    # scored once at 39/46 (out-of-sample), after the fixes heldout4 prompted; held at the
    # in-sample 45/46 reached after the general classes its misses prompted
    "heldout5.yaml": (45 / 46, 0),
    # scored once at 42/65 (out-of-sample) at 9d85a87, after heldout5's classes merged; held at
    # the in-sample 58/65 reached after the general classes its misses prompted
    # 59/65 after the ninth round relabelled an `other:` cause that got an id (was: in the file)
    "heldout6.yaml": (59 / 65, 0),
    # scored once at 41/64 with 4 negatives answered with a confident cause (out-of-sample) at
    # 9bf9739, after heldout6's classes merged; held at the in-sample 55/64 and no negative
    # confident reached after the general changes it prompted (the round had been read); 58/64
    # after the ninth round's emitter families (CUDA 802 by number) and two `other:` causes that
    # got an id (relabelled, was: in the file)
    # 59/64 after the tenth round relabelled one more `other:` cause that got an id (hostname-resolution)
    "heldout7.yaml": (59 / 64, 0),
    # scored once at 33/65 with 2 negatives answered with a confident cause (out-of-sample) at
    # 0917e07, after the ninth round's emitter families merged; held at the in-sample 53/65 and no
    # negative confident reached after the general changes it prompted (the tenth round; labels
    # relabelled with was: in the file)
    # 55/65 after the eighteenth round relabelled two `other:` CPU-only jaxlibs as torch-not-cuda
    # (was: in the file), named by the key table that learnt them (in-sample)
    "heldout8.yaml": (55 / 65, 0),
    # scored once at 38/67 with 2 negatives answered with a confident cause (out-of-sample) at
    # 0917e07, with heldout8, by the same explain; held at the in-sample 51/67 and no negative
    # confident reached after the general changes it prompted (the tenth round); 52/67 with the
    # eleventh round's key fallback (in-sample, and also with the table built without this round);
    # 53/67 with the twelfth round's key table (learnt from heldout10 and heldout11 too; in-sample);
    # 52/67 again once the table learnt from heldout13 as well: the key weights are shares over
    # every labelled text holding a key, so new texts move a fallback answer either way (back to
    # the eleventh round's figure)
    # 55/67 after the eighteenth round (mpi-not-cuda-aware, rdma-device-unavailable; `other:`
    # relabelled; in-sample)
    # 54/67 once the table learnt from heldout35: flashinfer#4217's keys (ptxas, sm_, triton) scored
    # nvcc-arch-unsupported 0.508, just over MIN_SCORE, and 0.49 after (the shares moved)
    "heldout9.yaml": (54 / 67, 0),
    # scored once at 29/64 with 3 negatives answered with a confident cause (out-of-sample) at
    # e74c745, after the eleventh round's key fallback merged; held there until the changes its
    # misses prompt; held at the in-sample 41/65 and no negative confident reached after the twelfth
    # round (tests/explain/test_emitter_round12.py: the words behind two of the three mended in
    # general, the third and an `other:` relabelled as their ids' definitions, was: in the file;
    # emitter families; the key table learnt from this round too)
    # 42/65 once the key table learnt from heldout12 too (in-sample)
    # 45/65 after the eighteenth round (gpu-reset-in-use, rdma-device-unavailable; `other:`
    # relabelled; in-sample); 45/63 once two `other:` TensorRT engines built elsewhere became
    # negatives (user-bug, heldout13's rule; was: in the file)
    # +1 in-sample with toolkit-too-old, added after round 28 (xgboost#11128 relabelled from `other:`;
    # tests/explain/test_emitter_toolkit_too_old.py)
    "heldout10.yaml": (46 / 63, 0),
    # scored once at 35/62 with no negative confident (out-of-sample) at e74c745, with heldout10;
    # held at the in-sample 42/62 and no negative confident after the twelfth round, as heldout10;
    # 43/62 once heldout32's s-z reader read glibc < 2.31's "symbol X version libcublasLt.so.N not
    # defined in file ... with link time reference" (deepmd-kit#2241, cuda-libs-conflict)
    "heldout11.yaml": (43 / 62, 0),
    # scored once at 38/64 with no negative confident (out-of-sample) at 7d90ef7, after the twelfth
    # round merged; 41/64 once the key table learnt from it (in-sample); 43/64 after the thirteenth
    # round (tests/explain/test_emitter_round13.py: NVRTC refusing another program's arch option is
    # the toolkit older than the GPU; in-sample); 45/64 with its CPU-only builds named by xFormers'
    # and XLA's words (in-sample)
    # 47/64 after the eighteenth round (video-codec-libs-missing; three `other:` relabelled; in-sample)
    # 46/64 once the key table learnt heldout32: DeepSpeed#3411 (a DeepSpeed JIT build missing
    # curand_kernel.h) was answered by the keys alone (tool:deepspeed), whose weight heldout32's
    # DeepSpeed negatives lowered below the table's threshold; no wording or template knows it
    "heldout12.yaml": (46 / 64, 0),
    # scored once at 27/62 with no negative confident (out-of-sample) at 65ed21e, after the
    # thirteenth round merged; held there until the changes its misses prompt
    # 51/61 once the key table learnt from heldout19 too (in-sample)
    "heldout13.yaml": (51 / 61, 0),
    "heldout14.yaml": (44 / 54, 0),
    "heldout15.yaml": (40 / 61, 1),
    # +1 in-sample with toolkit-too-old, added after round 28 (whisper.cpp#876 relabelled from `other:`;
    # tests/explain/test_emitter_toolkit_too_old.py)
    "heldout16.yaml": (34 / 53, 1),
    "heldout17.yaml": (27 / 47, 0),
    # 35/74 after the eighteenth round (video-codec-libs-missing, opencl-no-platform; relabels, was: in
    # the file; in-sample)
    # 36/74 after the twenty-second round's top-ups reader gave Kubernetes' "Insufficient
    # nvidia.com/gpu" its wording (kubeflow#794; in-sample)
    "heldout18.yaml": (36 / 74, 2),
    # scored once at 27/50 with 4 of 22 negatives answered with a confident cause (out-of-sample)
    # at b4f2f93, after the eighteenth round merged; held there until the changes its misses prompt
    # 31/51 with 3 of 21 negatives confident after the nineteenth round, part a (faiss's invalid GPU
    # device, an empty CUDA_HOME in a build rule; dgl#5547 and CUDA.jl#609 relabelled, was: in the
    # file; in-sample)
    # 29/49 with 2 of 23 negatives confident: in-sample, the nineteenth round, part b (Caffe's
    # CUDA_CHECK number, torchvision's removed modules, a package's own undefined symbols; a TensorRT
    # engine of another release made a negative, was: in the file)
    # both parts merged: 33/50 with 1 of 22 negatives confident (ollama#602; in-sample)
    "heldout19.yaml": (33 / 50, 1),
    # scored once at 24/46 with 1 of 17 negatives answered with a confident cause (out-of-sample)
    # at dac7536, after the nineteenth round merged; held there until the changes its misses prompt
    # 29/46 with 1 of 17 negatives confident: in-sample, the twentieth round, part a (TensorRT's CUDA
    # init error 35, Lightning finding no GPUs, cuDNN's loader and pyvideotrans naming a CUDA DLL,
    # hashcat's missing OpenCL ICD loader)
    # 28/46 with no negative confident: in-sample, the twentieth round, part b (libgomp/libgcc_s
    # symbol versions, clap's --device without CUDA, ctypes' module-not-found only possible,
    # libtensorflow's native-Windows GPU build after 2.10;
    # tiny-cuda-nn#434 relabelled no-kernel-image, was: in the file)
    # both parts merged: 33/46 with no negative confident (in-sample)
    "heldout20.yaml": (33 / 46, 0),
    # scored once at 20/53 with 3 of 21 negatives answered with a confident cause (out-of-sample)
    # at a618545, after the twentieth round merged; held there until the changes its misses prompt
    # 28/54 with 2 of 20 negatives confident: in-sample, the twenty-first round, part a ("No binary
    # for GPU" and Kokkos' arch probe, a cuDNN symbol missing from a cuDNN binding, FluxMPI's warning,
    # sherpa-onnx's CPU build, AutoAWQ's missing kernels; Open3D#3583 relabelled cuda-lib-missing,
    # was: in the file)
    # in-sample, the twenty-first round, part b (n-z: nvcuda.dll's missing cu* entry point, glibc's
    # string.h memcpy under nvcc, GFPGAN's RealESRGAN-on-CPU warning, a mid-run initialization
    # error only possibly a driver mismatch; NeMo/Speech#842 relabelled extension-ops-missing)
    # both parts merged: 32/54 with 1 of 20 negatives confident (xmrig-nvidia#248; in-sample)
    "heldout21.yaml": (32 / 54, 1),
    # scored once at 11/46 with 3 of 28 negatives answered with a confident cause (out-of-sample)
    # at 05ebd54 (explain as at 0d5a483), after the twenty-first round merged; held there until the
    # changes its misses prompt
    # 14/46 with 3 of 28 negatives confident: in-sample, the twenty-second round, first part (XLA's
    # PJRT plugin loader's API version mismatch, TVM's and decord's CPU builds ("Device API gpu is
    # not enabled", "Target cuda is not enabled"), an LLVM symbol no longer another torch;
    # apache/tvm#760 and #604 relabelled torch-not-cuda, was: in the file)
    # 19/46 with 3 of 28 negatives confident: in-sample, the twenty-second round, second part (n-z:
    # PaddlePaddle's checks of its CPU package, gpu_info.cc's CUDA error code 35, init.cc's "no GPU
    # found in runtime" a driver-too-old lead; Paddle#16630 and PaddleClas#1527 relabelled
    # cuda-lib-missing, was: in the file)
    # 16/46 with 3 of 28 negatives confident: in-sample, the twenty-second round, the first part's
    # top-ups (cudnn.torch's "libcudnn (RN) not found in library path", CUDArt.jl's "CUDA runtime API
    # library cannot be found", Kubernetes' scheduler "Insufficient nvidia.com/gpu" and the kubelet's
    # "requested number of devices unavailable", DeePMD-kit's CPU build and CPU device, InvokeAI's
    # device_type cpu; no relabels)
    # all three merged: 27/46 with 3 of 28 negatives confident (in-sample)
    # +1 in-sample with toolkit-too-old, added after round 28 (cuPDLPx#11 relabelled from `other:`;
    # tests/explain/test_emitter_toolkit_too_old.py)
    "heldout22.yaml": (28 / 46, 3),
    # 13/40 with 7 of 26 negatives confident: out-of-sample, scored once at 30d763f (the twenty-third
    # round, 66 texts from six collectors' parts split by owner; nobody had run explain on them)
    # 16/40 with 7 of 26 negatives confident: in-sample, the twenty-third round, the first part's
    # top-ups (ND4J's "No CUDA devices were found in system", torch.load's "Attempting to deserialize
    # object on a CUDA device but torch.cuda.is_available() is False" a CPU-only torch as a lead only,
    # LibTorchSharp's P/Invoke 0x8007007F a libtorch of another release; no relabels)
    # 16/40 with 7 of 26 negatives confident: in-sample, the twenty-third round, part b (n-z: cuBLAS's
    # handle not created in TensorFlow's, Caffe's and torch's words, CUBLAS_STATUS_ALLOC_FAILED also
    # cublasCreate's, Caffe's "Cannot create cuDNN handle", FindCUDA.cmake's "Specify
    # CUDA_TOOLKIT_ROOT_DIR", nnabla's NVML GPU-list failure, a check macro's file and line before
    # the runtime's description; no relabels)
    # 17/40 with 6 of 26 negatives confident: in-sample, the twenty-third round, first part
    # (SageAttention's "SMxx kernel is not available", an extension refusing the CUDA runtime's launch
    # API of the other side of nvcc 9.2 / CUDA 10.1, conda's own ld missing a CUDA link library,
    # LightGBM's recompile line, the bare "initialization error" only possible; LightGBM#6205
    # relabelled torch-not-cuda, was: in the file)
    # 15/40 with 5 of 26 negatives confident: in-sample, the twenty-third round, the second part's
    # top-ups (n-z: ptxas' .version check inside Triton's own compile only possibly an old ptxas,
    # CUDA_ERROR_INVALID_PTX (218) only possibly a too-new toolchain, CTranslate2's compute-type gate
    # gpu-too-old by the device shown; NVIDIA/TensorRT#51 relabelled [arch-not-compatible,
    # cudnn-execution-failed], was: in the file)
    # all four merged: 25/40 with 4 of 26 negatives confident (in-sample)
    "heldout23.yaml": (25 / 40, 4),
    # 11/37 with 5 of 32 negatives confident: out-of-sample, scored once at 6a7aaaf (the twenty-fourth
    # round, 69 texts from two collectors' parts split by owner; nobody had run explain on them)
    # 15/37 with 5 of 32 negatives confident: in-sample, the twenty-fourth round, part a2 (texts 21-41:
    # Kaldi's configure refusing the host g++ for its CUDA gcc-too-new, the runtime's "invalid device
    # symbol" possibly no-kernel-image; no relabels)
    # 13/37 with 5 of 32 negatives confident: in-sample, the twenty-fourth round, part b2 (n-z, texts
    # 15-28: nvidia-docker 1.0's volume plugin not found, Docker's lookup, container-toolkit-missing
    # by a wording rather than the keys; Ultralytics' select_device read from the counts it prints,
    # no device a CPU torch then no driver as leads, a +cu banner no-driver-found, fewer GPUs than
    # asked invalid-device-ordinal; no relabels)
    # 15/37 with 5 of 32 negatives confident: in-sample, the twenty-fourth round, part a1 (texts 1-20:
    # torch cpp_extension's where/which lookup of the host compiler exiting 1, JCuda's "Error while
    # loading native library" for a CUDA library's binding cuda-lib-missing (JCudnn's cudnn-lib-missing),
    # archs nvcc shows it built no arch keys; 13/37 before it, from the key table that learnt the
    # round; no relabels)
    # 14/37 with 3 of 32 negatives confident: in-sample, the twenty-fourth round, part b1 (n-z, texts
    # 1-14: TensorFlow 1.x's Windows self-check naming the cudart/cuDNN/nvcuda DLL it could not load;
    # undefined-symbol no longer confident for TensorFlow's namespaces, torch's own binaries or
    # TensorFlow's op loader, nor toolkit-torch-mismatch's launch-API reading there; no relabels)
    # all four parts merged: 18/37 with 3 of 32 negatives confident (in-sample)
    "heldout24.yaml": (18 / 37, 3),
    # 15/41 with 2 of 32 negatives confident: out-of-sample, scored once at 5b42059 (the twenty-fifth
    # round, 73 texts from three collectors' parts split by owner; nobody had run explain on them)
    # 18/41 with 2 of 32 negatives confident: in-sample, the twenty-fifth round, part a2 (texts 21-39:
    # the gpuErrchk idiom's "GPUassert: unknown error" cuda-unknown-error, the C++ OpenCL bindings'
    # uncaught cl::Error from clGetPlatformIDs opencl-no-platform, nvcc's front end on libstdc++'s
    # __int128/__float128 gcc-too-new; gpuRIR#17 relabelled [cuda-unknown-error, driver-state-stale],
    # was: in the file)
    # 19/41 with 2 of 32 negatives confident: in-sample, the twenty-fifth round, part a1 (texts 1-20:
    # GNU make's ENOENT for the compiler host-compiler-missing; CMake's CMAKE_CUDA_COMPILER-NOTFOUND
    # cuda-home-unset; AutoDock-GPU's build-time "Cuda is not available, using OpenCL" a toolkit
    # check, no longer torch's no-driver-found; thinc's gpu_ops module extension-ops-missing;
    # Lasagne's "dnn not available" under Theano's GPU banner cudnn-lib-missing; no relabels)
    # parts a1 and a2 merged: 22/41 with 2 of 32 negatives confident (in-sample)
    # 25/41 with 2 of 32 negatives confident: in-sample, the twenty-fifth round, part b (n-z, 34 texts,
    # with parts a1 and a2 merged; 18/41 on its own: svox2's "CUDA extension is currently required for ..."
    # extension-ops-missing, torch's allocator refusing a PYTORCH_CUDA_ALLOC_CONF option of a later
    # torch package-torch-mismatch; pytorch_sparse#49 relabelled extension-ops-missing, was: in the file)
    "heldout25.yaml": (25 / 41, 2),
    # 19/45 with 0 of 22 negatives confident: out-of-sample, scored once at 4f9f1e9 (the twenty-sixth
    # round, 67 texts from four collectors' parts split by owner; nobody had run explain on them)
    # 24/45 with 0 of 22 negatives confident: in-sample, the twenty-sixth round, part c (texts 20-38:
    # MegEngine's driver stub not loading libcuda no-driver-found, barnex/cuda5's "Unknown CUresult:
    # 35" the runtime's insufficient driver, faiss's GPU names under Python 2 a CPU-only faiss, TVM
    # 0.2-0.3's build_cuda.cc missing nvrtc.h without CUDA_PATH cuda-home-unset; 20/45 before it,
    # from the key table that learnt the round; no relabels)
    # 24/45 with 0 of 22 negatives confident: in-sample, the twenty-sixth round, part a (texts 1-19:
    # a versioned driver API symbol missing at load, cu*_vN, and PyCUDA's header/driver warning
    # driver-too-old; OpenCV's throw_no_cuda in its 2.4/3.x and Emgu CV formats torch-not-cuda;
    # ethminer's own search kernel failing mid-run gpu-hardware-fault; pytools' ExecError spawning
    # nvcc cuda-home-unset; no relabels)
    # 24/45 with 0 of 22 negatives confident: in-sample, the twenty-sixth round, part b (n-z, texts
    # 39-67: MXNet's "Compile with USE_CUDA=1 to enable GPU usage", Caffe's CPU_ONLY stub and
    # cpp_extension's empty arch list as torch-not-cuda leads, possible; tiny-cuda-nn#284 relabelled
    # system-lib-too-old, was: in the file; 20/45 with the key table learnt, before the reading)
    # all three parts merged: 32/45 with 0 of 22 negatives confident (in-sample)
    "heldout26.yaml": (32 / 45, 0),
    # 12/58 with 4 of 45 negatives confident: out-of-sample, scored once at 2818658 (the twenty-seventh
    # round, 103 texts from four collectors' parts split by owner; nobody had run explain on them)
    # 14/58 with 4 of 45 negatives confident: in-sample, the twenty-seventh round, part b (g-m, texts
    # 20-42: conda's/mamba's __cuda constraint above the driver's __cuda driver-too-old; godot#76524,
    # #58621 and gfx#3273 relabelled other: (GPUs without Vulkan), was: gpu-too-old; gpu-jupyter#22
    # relabelled [nvidia-smi-no-driver, no-driver-found], was: no-driver-found)
    # 15/58 with 4 of 45 negatives confident: in-sample, the twenty-seventh round, part d (t-z,
    # texts 83-103: the NVHPC/PGI OpenACC runtime's "Rebuild the application with -gpu=ccNN"
    # no-kernel-image; xFormers' bare "can't load C++/CUDA extensions" extension-ops-missing;
    # Tabby's llama-server of a cudaNNN build exiting 0xC0000135 cudart-lib-missing; no relabels)
    # 17/58 with 4 of 45 negatives confident: in-sample, the twenty-seventh round, part c1 (n-s, texts
    # 43-66: TensorFlow's GPU-only kernels without a GPU device no-driver-found, spconv's CPU build
    # torch-not-cuda, nvcc without its host compiler host-compiler-missing, nvtop's FindNVML without
    # libnvidia-ml nvidia-smi-no-driver, cuDNN's fatal exit in cudnn64_8.dll cudnn-lib-missing (a
    # lead); Paddle#45209 relabelled cudnn-lib-missing, was: in the file)
    # 15/58 with 3 of 45 negatives confident: in-sample, the twenty-seventh round, part c2 (n-s,
    # texts 67-82: TensorRT's init failure 222 ptx-toolchain-too-new; DIGITS' silent device query
    # cudart-lib-missing; nvidia-docker 1.0's missing nvidia_driver_<version> volume
    # driver-state-stale; Yaksa's init hook finding no GPU only a lead; InsightFace-REST#24 and
    # nvidia-docker#416 relabelled, was: in the file)
    # 16/58 with 3 of 45 negatives confident: in-sample, the twenty-seventh round, part a (0-9/a-f,
    # texts 1-19: BIDMat's "Couldn't load CUDA runtime" cudart-lib-missing and its native library
    # not loaded cuda-lib-missing, DWPose's onnxruntime without a GPU provider torch-not-cuda;
    # NVRTC's bare "failed to load builtins" and the GSP's Xid 119/120 only leads;
    # SparseConvNet#55 relabelled extension-torch-incompatible, was: in the file)
    # all five parts merged: 29/58 with 2 of 45 negatives confident (in-sample)
    "heldout27.yaml": (29 / 58, 2),
    # 16/39 with 4 of 32 negatives confident: out-of-sample, scored once at bb3f056 (the twenty-eighth
    # round, 71 texts from three collectors' parts split by owner; nobody had run explain on them)
    # 18/39 with 3 of 32 negatives confident: in-sample, the twenty-eighth round, part b (i-r, texts
    # 21-45: torch's dispatcher for a package's own op without its CUDA kernel
    # extension-ops-missing, TF-TRT's nvinfer stub "symbol not found" cuda-lib-missing (libnvinfer);
    # cuda_fp8.h, CUDA 11.8 on, no longer read as no toolkit; no relabels)
    # 17/39 with 3 of 32 negatives confident: in-sample, the twenty-eighth round, part a (0-9/a-h,
    # texts 1-20: flashlight's and wav2letter's CUDAUtils.cmake "CUDA required to build CUDA
    # backend" cuda-home-unset; the 2010-era cu*_v2 driver symbols missing from a library not
    # linked to libcuda only a lead, vosk-api#752 no longer confident; no relabels)
    # 24/39 with 2 of 32 negatives confident: in-sample, the twenty-eighth round, part c (s-z, texts
    # 46-71, on parts a, b and toolkit-too-old merged: 20/39 -> 24/39; Theano's "Mixed dnn version"
    # cudnn-version-mismatch; BasicSR's ops' NameErrors and stylegan2's missing upfirdn2d
    # extension-ops-missing, apex's NameError only a lead; undefined-symbol no longer reads
    # TensorRT's or TensorRT-LLM's symbols as another torch; no relabels)
    # all three parts and toolkit-too-old merged: 24/39 with 2 of 32 negatives confident (in-sample)
    "heldout28.yaml": (24 / 39, 2),
    # 6/32 with 2 of 30 negatives confident: out-of-sample, scored once at 3823f6e (the twenty-ninth
    # round, 62 texts from five collectors' parts split by owner; nobody had run explain on them)
    # 9/32 with 2 of 30 negatives confident: in-sample, the twenty-ninth round, part b (s-z, texts
    # 20-40: cudnn.torch's "These bindings are for ... while the loaded CuDNN is version"
    # cudnn-version-mismatch exact; FindCUDA's "Specify CUDA_TOOLKIT_ROOT_DIR" quoted without
    # CMake's prefix cuda-home-unset; TF 1.x's "Op type not registered 'NcclAllReduce'"
    # nccl-not-built; no relabels)
    # 10/33 with 1 of 29 negatives confident: in-sample, the twenty-ninth round, part c (i-r, texts
    # 41-62: numba's library self-test "can't locate lib" cuda-lib-missing, FastDeploy's CPU build
    # torch-not-cuda; executor-clip-encoder#7 relabelled no-kernel-image, was: a negative)
    # 12/32 with 2 of 30 negatives confident: in-sample, the twenty-ninth round, part a (0-9/a-h,
    # texts 1-19: COLMAP's count of CUDA devices no-driver-found; ArrayFire's 2015 CUDA backend and
    # OpenMM's unregistered CUDA platform cuda-lib-missing; nvidia-container-cli's "invalid
    # expression" on a brand= requirement container-toolkit-too-old; MNN's "Can't Find type=2
    # backend" torch-not-cuda, MNN#2297 relabelled from other:, was: in the file)
    # all three parts merged: 17/33 with 1 of 29 negatives confident (in-sample)
    "heldout29.yaml": (17 / 33, 1),
    # 13/58 with 8 of 58 negatives confident: out-of-sample, scored once at d5206bf (the thirtieth
    # round, 116 texts from four collectors' parts split by owner; nobody had run explain on them)
    # 17/58 with 8 of 58 negatives confident: in-sample, the thirtieth round, part a (0-9/a-f, texts
    # 1-21: CuPy's "CuPy is not correctly installed" / "Failed to import CuPy." extension-ops-missing;
    # nvcc's bound-function and type-name errors on one line extension-torch-incompatible;
    # ParallelCluster's Chef error on the fabric manager service fabric-manager; Mask2Former#31
    # relabelled [toolkit-torch-mismatch, undefined-symbol], was: toolkit-torch-mismatch)
    # 14/58 with 7 of 58 negatives confident: in-sample, the thirtieth round, part b (g-m, texts
    # 22-55: madgraph4gpu's cudacpp.mk notice "CUDA_HOME is not set or is invalid" cuda-home-unset a
    # lead, its REQUIRE_CUDA error likely; bert-as-service's "no GPU available, fall back to CPU"
    # gpu-busy-or-unavailable a lead; no relabels)
    # 19/58 with 7 of 58 negatives confident: in-sample, the thirtieth round, part d (t-z, texts
    # 99-116: AT_CHECK refused by the compiler extension-torch-incompatible; Triton's empty set of
    # supported GPUs gpu-too-old, possible; nvcc's old-ABI basic_string under a newer g++
    # gcc-too-new; Simple Transformers' use_cuda check no-driver-found, possible; an unversioned
    # cuBLAS symbol missing from libtorch cuda-libs-conflict likely -> possible; no relabels)
    # 17/58 with 6 of 58 negatives confident: in-sample, the thirtieth round, part c (n-s, texts
    # 56-98: an undefined nvml* symbol driver-too-old; JAX's "Unknown backend gpu" torch-not-cuda
    # for jaxlib; go-nvlib's "error getting ...: Insufficient Permissions" device-permission; PyG's
    # old check on two 11.x minors only possible; THC/THC.h missing in PyTorch's own 0.x tree not
    # read; mmcv#1380 relabelled [extension-ops-missing, cudart-lib-missing, cuda-lib-missing])
    # all four parts merged: 25/58 with 4 of 58 negatives confident (in-sample)
    "heldout30.yaml": (25 / 58, 4),
    # 8/20 with 3 of 20 negatives confident: out-of-sample, scored once at 11591e4 (the thirty-first
    # round, SCOPED to texts that name PyTorch, 40 texts; nobody had run explain on them)
    # 11/20 with 3 of 20 negatives confident: in-sample, the thirty-first round, part a (0-9/a-m,
    # texts 1-18: torch/extension.h and c10d/*.hpp not found by the compiler
    # extension-torch-incompatible; pip's torchvision/torchaudio/xformers pin conflict with the
    # installed torch package-torch-mismatch; LGM#24 relabelled [package-version-refused,
    # package-torch-mismatch], was: package-version-refused)
    # 12/20 with 3 of 20 negatives confident: in-sample, the thirty-first round, part b (n-z, texts
    # 19-40: PyG's packages finding no compiled op library (find_spec's None .origin, "Could not
    # find module '_X_cpu' in ...torch_sparse") extension-ops-missing; "module 'torch.distributed'
    # has no attribute 'init_process_group'" nccl-not-built; setuptools' "Searching for torch<spec>"
    # package-version-refused a lead, its failure likely; pytorch#6310 relabelled
    # [cudnn-version-mismatch, cudnn-execution-failed])
    # both parts merged: 15/20 with 3 of 20 negatives confident (in-sample)
    "heldout31.yaml": (15 / 20, 3),
    # 8/45 with 3 of 34 negatives confident: out-of-sample, scored once at fe46cea (the thirty-second
    # round, SCOPED like the thirty-first to texts that name PyTorch, 79 texts; nobody had run
    # explain on them; 14 positives are `other:`: 8/31 with an id)
    # 10/45 with 3 of 34 negatives confident: in-sample, the thirty-second round, part a (0-9/a-h,
    # texts 1-27: torch.utils._pytree's register_pytree_node, public from torch 2.2,
    # package-torch-mismatch; DJL's UnsatisfiedLinkError on a torch DLL "Can't find dependent
    # libraries" windows-dll-load-failed; the torch._six negatives kept; no relabels)
    # 15/45 with 3 of 34 negatives confident: in-sample, the thirty-second round, part d (s-z, texts
    # 64-79: glibc<2.31's "symbol X version libcublasLt.so.N not defined in file ... with link time
    # reference" cuda-libs-conflict; torch names a release added (trunc_normal_, SiLU, hub.load's
    # repo_or_dir, custom_op, DeviceMesh, flex_attention) missing under an older torch
    # package-torch-mismatch; no relabels)
    # 14/45 with 2 of 34 negatives confident: in-sample, the thirty-second round, part b (i-o, texts
    # 28-48: names a later torch added (frombuffer, nn.Buffer, return_and_correct_aliasing,
    # Size.numel) package-torch-mismatch likely, torch<0.4's "expected Variable or None (got
    # torch.FloatTensor)" a lead; c10's "not linked with support for cuda devices" torch-not-cuda;
    # NCCL's "Cuda failure 2 'out of memory'" cuda-oom, superseding nccl-cuda-error; no relabels)
    # 11/45 with 3 of 34 negatives confident: in-sample, the thirty-second round, part c (p-r,
    # texts 49-63: macOS dyld's "Symbol not found ... Expected in: torch/lib/libtorch*.dylib"
    # undefined-symbol, likely; pytorch-scripts#18 relabelled [gpu-too-old, no-kernel-image],
    # GPT-SoVITS#490 [cudnn-version-mismatch, cudnn-execution-failed])
    # all four parts merged: 26/45 with 2 of 34 negatives confident (in-sample)
    # 29/45 with 2 of 34: mkl-lib-mismatch added, three `other:` MKL texts relabelled (in-sample)
    "heldout32.yaml": (29 / 45, 2),
    # 10/27 with 1 of 18 negatives confident: out-of-sample, scored once at 3d8d456 (the thirty-third
    # round, SCOPED like rounds 31 and 32 to texts that name PyTorch, 45 texts; nobody had run explain
    # on them; 5 positives are `other:`: 10/22 with an id; 3 of the 10 from the release table, possible)
    # 14/27 with 1 of 18 negatives confident: in-sample, the thirty-third round, part a (0-9/a-k,
    # texts 1-18: xFormers' "No such operator xformers::" extension-ops-missing; Open3D's "Version
    # mismatch: Open3D needs PyTorch version", transformers' "Disabling PyTorch because PyTorch >= X
    # is required" and accelerate's "FSDP requires PyTorch >= X" package-version-refused; FSDP's
    # ShardingStrategy missing package-torch-mismatch; no relabels)
    # 16/27 with 1 of 18 negatives confident: in-sample, the thirty-third round, part b (l-z, texts
    # 19-45: torch 1.x's "Found GPU%d %s which requires CUDA_VERSION >= %d" cut short
    # arch-not-compatible; torch.cuda.amp.autocast and TorchDispatchMode package-torch-mismatch;
    # Tutel's NVRTC folder cuda-home-unset; TensorRT#588 [cuda-lib-missing] and 3d-ken-burns#15
    # [torchvision-undefined-symbol, no-kernel-image] relabelled; Text_select_captcha#20 kept)
    # both parts merged: 20/27 with 1 of 18 negatives confident (in-sample)
    "heldout33.yaml": (20 / 27, 1),
    # 19/41 with 4 of 33 negatives confident: out-of-sample, scored once at a0e635b (the thirty-fifth
    # round, SCOPED like rounds 31-33 to texts that name PyTorch, 74 texts; nobody had run explain on
    # them; 10 positives are `other:`: 19/31 with an id)
    # 21/41 with 4 of 33: mkl-lib-mismatch added, conda#13812 and IPEX#561 relabelled (in-sample)
    # 26/41 with 2 of 33: in-sample, the thirty-fifth round, part a (texts 1-36: IPEX's and
    # transformers' torch.load checks package-version-refused; TorchScript's "Unknown builtin op:
    # torchvision::" torchvision-nms-missing; DJL's "No PyTorch native library matches"
    # no-wheel-for-platform; "CUDA driver initialization failed" on Windows no-driver-found;
    # xFormers' "operator wasn't built" beside other refusals and "cannot find -lcudart" after a
    # conda lib64 link no longer confident; no relabels)
    # part b (texts 37-74) read: 27/41 with 3 of 33 (torchaudio's CUDA check, Lightning's scheduler
    # check, clip_grad_norm_, an op library aborting in load_library; torch 1.7's no-driver probe
    # warning a lead; pytorch#85647 [package-torch-mismatch, torchvision-undefined-symbol]) (in-sample)
    # both parts merged: 32/41 with 1 of 33 negatives confident (in-sample)
    "heldout35.yaml": (32 / 41, 1),
    # 46/94 with 3 of 31 negatives confident: out-of-sample, scored once at 14801ce (the thirty-sixth
    # round, the first from files in public repositories (FAQs, troubleshooting pages, people's notes),
    # taken by URL alone; nobody had run explain on them; 28 positives are `other:`: 46/66 with an id)
    # 55/94 with 3 of 31: in-sample, its misses with an id read (nvcc not on PATH in notes' and
    # cmd.exe's words, CMake's bare "Could not find CUDA", torch's arch warning cut to the GPU's name,
    # the k8s device plugin finding no NVML, DCGM's row remapping, bitsandbytes' library named
    # missing; tests/explain/test_emitter_round36.py; no relabels)
    # 57/94 with 3 of 31: driver-module-in-use added after round 37, two `other:` positives relabelled
    # 59/94 with 3 of 31: cmake-too-old added after round 38, two `other:` positives relabelled
    "heldout36.yaml": (59 / 94, 3),
    # 33/66 with 0 of 20 negatives confident: out-of-sample, scored once at 0eaca80 (the thirty-seventh
    # round, the second from files, collected after the thirty-sixth was read; 22 positives are
    # `other:`: 33/44 with an id)
    # 37/66 with 0 of 20: in-sample, its misses with an id read (torch's libuv refusal in its later
    # spelling, Cython's ndarray size check, Paddle's bare cuDNN load failure, MSVC's C3861 on AT_CHECK;
    # tests/explain/test_emitter_round37.py; no relabels)
    # 39/66 with 0 of 20: driver-module-in-use added, two `other:` positives relabelled (in-sample)
    "heldout37.yaml": (39 / 66, 0),
    # 21/59 with 0 of 31 negatives confident: out-of-sample, scored once at c23f709 (the thirty-eighth
    # round, the third from files, collected after the thirty-seventh was read; 16 positives are
    # `other:`: 21/43 with an id)
    # 31/59 with 0 of 31: in-sample, its misses with an id read (TensorFlow's kernel/DSO version
    # check and a driver library named by its release, GNU ld's -lNAME for any library, the
    # loader's symbol version of libcudnn, a DLL load failure cut before its colon, TensorRT's Half2
    # warning, CUDA 9 on gcc 6's <tuple>, MSVC's STL1002, Open MPI's dead daemon;
    # tests/explain/test_emitter_round38.py; no relabels)
    "heldout38.yaml": (31 / 59, 0),
}
NEGATIVE_KINDS = {"oom", "user-bug", "unrelated"}
# collected, not yet scored: structure-checked always, scored once on request (issue 21's bar)
UNSCORED: dict = {}
SCORE_UNSCORED = os.environ.get("ENVCHECK_SCORE_HELDOUT4") == "1"
# rounds scoped to one kind of text (their headers state the rule), smaller than the 60 texts issue 21
# asks of a round: their figure is reported beside the others', never counted as one of them
SCOPED = {"heldout31.yaml": "texts that name PyTorch", "heldout33.yaml": "texts that name PyTorch",
          "heldout34.yaml": "texts that name PyTorch", "heldout35.yaml": "texts that name PyTorch"}
# rounds that hold a thread new to the project by its URL alone and take it as it comes, its text
# word for word one already held included (the next user's paste); every other round from the
# fourth passed over a thread whose text was held, which selects the rarest messages
BY_URL_ONLY = {"heldout34.yaml", "heldout36.yaml", "heldout37.yaml", "heldout38.yaml", "heldout39.yaml"}
# begun, not yet a round: structure-checked, never run through explain until topped up and scored
COLLECTING = {"heldout34.yaml", "heldout39.yaml"}


@lru_cache(maxsize=None)
def _items(name):
    """A round's texts, read once per process (every round's new-to-the-earlier test reads all the
    rounds before it); the tests only read them."""
    return yaml.load((HELDOUT / name).read_text(), Loader=LOADER)  # noqa: S506


@lru_cache(maxsize=None)
def _corpus_sources() -> frozenset:
    return frozenset(i["source"] for f in HELDOUT.parent.glob("errors/*.yaml")
                     for i in yaml.load(f.read_text(), Loader=LOADER))  # noqa: S506


def _wanted(item):
    want = item["cause"]
    return want if isinstance(want, list) else [want]


@pytest.mark.parametrize("name", sorted(BARS) + sorted(UNSCORED) + sorted(COLLECTING))
def test_the_held_out_corpus_is_real_texts_with_sources_and_confirmed_causes(name):
    items = _items(name)
    assert len(items) >= (1 if name in COLLECTING else 20 if name in SCOPED else 60)
    ids = {s.id for s in signatures()}
    negatives = [i for i in items if i["cause"] is None]
    assert len(negatives) >= (0 if name in COLLECTING else 10) and {i["kind"] for i in negatives} <= NEGATIVE_KINDS
    for item in items:
        assert item["source"].startswith("https://github.com/") and item["text"].strip() and item["settled"]
        if item["cause"] is not None:
            assert all(c in ids or c.startswith("other:") for c in _wanted(item)), item["source"]
    sources = [i["source"] for i in items]
    assert len(set(sources)) == len(sources), "a thread taken twice"
    assert not _corpus_sources() & set(sources), "a held-out text is also in the corpus the wordings came from"


def test_the_second_round_is_new_to_the_first():
    first = {i["source"] for i in _items("heldout.yaml")}
    texts = {" ".join(i["text"].split()).lower() for i in _items("heldout.yaml")}
    for item in _items("heldout2.yaml"):
        assert item["source"] not in first
        assert " ".join(item["text"].split()).lower() not in texts, item["source"]


ROUNDS = ["heldout.yaml", "heldout2.yaml", "heldout3.yaml", "heldout4.yaml", "heldout5.yaml",
          "heldout6.yaml", "heldout7.yaml", "heldout8.yaml", "heldout9.yaml", "heldout10.yaml",
          "heldout11.yaml", "heldout12.yaml", "heldout13.yaml", "heldout14.yaml", "heldout15.yaml",
          "heldout16.yaml", "heldout17.yaml", "heldout18.yaml", "heldout19.yaml", "heldout20.yaml", "heldout21.yaml",
          "heldout22.yaml", "heldout23.yaml", "heldout24.yaml",
          "heldout25.yaml", "heldout26.yaml", "heldout27.yaml", "heldout28.yaml",
          "heldout29.yaml", "heldout30.yaml", "heldout31.yaml", "heldout32.yaml", "heldout33.yaml",
          "heldout34.yaml", "heldout35.yaml", "heldout36.yaml", "heldout37.yaml", "heldout38.yaml",
          "heldout39.yaml"]


@pytest.mark.parametrize("n", range(2, len(ROUNDS)), ids=ROUNDS[2:])
def test_each_round_from_the_third_is_new_to_every_earlier_one(n):
    earlier = [i for name in ROUNDS[:n] for i in _items(name)]
    sources = {i["source"] for i in earlier}
    texts = {" ".join(i["text"].split()).lower() for i in earlier}
    for item in _items(ROUNDS[n]):
        assert item["source"] not in sources
        if ROUNDS[n] not in BY_URL_ONLY:
            assert " ".join(item["text"].split()).lower() not in texts, item["source"]


def _score(items):
    hits, misses, confident = 0, [], []
    for item in items:
        found = explain(item["text"])
        if item["cause"] is None:
            confident += [(item["source"], e.id) for e in found
                          if e.kind == "environment" and e.confidence in ("exact", "likely")]
            continue
        got = top_environment_cause(found)
        if got and got.id in _wanted(item):
            hits += 1
        else:
            misses.append(f"{item['source']}: want {_wanted(item)}, got {got.id if got else None}")
    return hits, misses, confident


@pytest.mark.parametrize("name", [
    *sorted(BARS),
    *(pytest.param(n, marks=pytest.mark.skipif(not SCORE_UNSCORED, reason=(
        "held out, not yet scored: the coordinator scores it once with ENVCHECK_SCORE_HELDOUT4=1")))
      for n in sorted(UNSCORED))])
def test_recall_on_texts_nobody_here_wrote_and_no_confident_cause_on_negatives(name, capsys):
    items = _items(name)
    hits, misses, confident = _score(items)
    positives = hits + len(misses)
    floor, allowed = {**BARS, **UNSCORED}[name]
    with capsys.disabled():
        print(f"\n{name}: {hits}/{positives} = {hits / positives:.1%} recall; "
              f"{len(confident)} confident environment causes on {len(items) - positives} negatives")
        for m in misses:
            print("  miss:", m)
        for c in confident:
            print("  confident on a negative:", c)
    assert len(confident) <= allowed, confident
    assert hits >= floor * positives - 1e-9, misses


def test_the_answers_do_not_depend_on_the_hash_seed():
    """The same text gets the same answer in every run: sets iterate in hash-seed order, and a
    tie between two catalogue hits must not be settled by it."""
    import subprocess
    import sys
    script = ("import sys, yaml; from envcheck.explain.match import explain\n"
              f"L = yaml.{LOADER.__name__}\n"
              "for p in sys.argv[1:]:\n"
              "    for it in yaml.load(open(p).read(), Loader=L): print(repr(explain(it['text'])))\n")
    files = [str(HELDOUT / n) for n in sorted(BARS)]     # an unscored round is never run through explain
    runs = {subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120).stdout for seed in ("1", "2")}
    assert len(runs) == 1 and runs.pop().count("\n") > 300
