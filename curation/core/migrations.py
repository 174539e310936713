"""The catalog's schema migrations, in order: frozen SQL text.

Each entry moves the schema one version forward. A released entry is never edited (its sha256 is pinned in
`tests/core/migration_hashes.json`); a change is a new entry appended at the end. The schema they build,
with keys and a description of every table and column, is printed by `curate schema` (`docs/schema.md`).
"""

from __future__ import annotations

# Each entry moves the schema one version forward; never edit a released entry,
# append a new one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE runs (
        run_id VARCHAR, stage VARCHAR, params JSON, code_version VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, status VARCHAR, counts JSON
    );
    CREATE TABLE videos (
        video_id VARCHAR NOT NULL, source VARCHAR NOT NULL, native_id VARCHAR NOT NULL,
        title VARCHAR, description VARCHAR, hashtags VARCHAR[], keywords VARCHAR[],
        author_name VARCHAR, author_bio VARCHAR, author_verified BOOLEAN,
        like_count BIGINT, comment_count BIGINT, collect_count BIGINT, share_count BIGINT,
        duration_s DOUBLE, published_at TIMESTAMP, label VARCHAR, category VARCHAR,
        synthetic BOOLEAN NOT NULL DEFAULT false, media_path VARCHAR,
        raw_ref VARCHAR, ingest_run VARCHAR, extra JSON, record_hash VARCHAR
    );
    CREATE TABLE comments (
        comment_id VARCHAR NOT NULL, video_id VARCHAR NOT NULL, parent_id VARCHAR,
        author VARCHAR, text VARCHAR, like_count BIGINT, time_s DOUBLE,
        created_at TIMESTAMP, ingest_run VARCHAR
    );
    CREATE TABLE rejects (
        run_id VARCHAR, stage VARCHAR, source VARCHAR, raw_ref VARCHAR,
        record_id VARCHAR, reason VARCHAR, raw BLOB
    );
    """,
    """
    CREATE TABLE keyword_sets (
        video_id VARCHAR NOT NULL, keywords VARCHAR[], origins VARCHAR[],
        text VARCHAR, text_sha256 VARCHAR, run_id VARCHAR
    );
    CREATE TABLE embeddings (
        model_id VARCHAR NOT NULL, text_sha256 VARCHAR NOT NULL, vector FLOAT[],
        run_id VARCHAR
    );
    CREATE TABLE clusters (
        run_id VARCHAR, cluster_id INTEGER, size INTEGER, top_keywords VARCHAR[],
        medoid_video VARCHAR, mean_similarity DOUBLE
    );
    CREATE TABLE cluster_members (
        run_id VARCHAR, video_id VARCHAR, cluster_id INTEGER, probability DOUBLE
    );
    CREATE TABLE feeds (
        feed_id VARCHAR NOT NULL, version INTEGER NOT NULL, anchor_cluster INTEGER,
        cluster_run VARCHAR, keyword_videos VARCHAR[], other_videos VARCHAR[],
        video_feed VARCHAR[], ratio DOUBLE, seed BIGINT, run_id VARCHAR,
        total_runtime_s DOUBLE, edit JSON, created_at TIMESTAMP
    );
    """,
    """
    CREATE TABLE media_files (
        video_id VARCHAR NOT NULL, path VARCHAR NOT NULL, root VARCHAR, matched_by VARCHAR,
        run_id VARCHAR
    );
    CREATE TABLE media_probes (
        video_id VARCHAR NOT NULL, path VARCHAR, sha256 VARCHAR, size_bytes BIGINT,
        container VARCHAR, video_codec VARCHAR, audio_codec VARCHAR, width INTEGER,
        height INTEGER, rotation INTEGER, fps DOUBLE, variable_fps BOOLEAN, duration_s DOUBLE,
        has_audio BOOLEAN, run_id VARCHAR
    );
    CREATE TABLE media_outputs (
        video_id VARCHAR NOT NULL, input_sha256 VARCHAR, settings_sha256 VARCHAR,
        output_path VARCHAR, poster_path VARCHAR, frames_dir VARCHAR, frames INTEGER,
        width INTEGER, height INTEGER, fps DOUBLE, duration_s DOUBLE, run_id VARCHAR
    );
    """,
    """
    CREATE TABLE ls_projects (
        base_url VARCHAR, annotator VARCHAR, project_id INTEGER, title VARCHAR,
        config_sha256 VARCHAR, run_id VARCHAR
    );
    CREATE TABLE ls_tasks (
        base_url VARCHAR, project_id INTEGER, ls_task_id INTEGER, feed_id VARCHAR,
        feed_version INTEGER, annotator VARCHAR, run_id VARCHAR
    );
    CREATE TABLE tasks (
        task_id VARCHAR NOT NULL, version INTEGER NOT NULL, author VARCHAR,
        feed_id VARCHAR, base_feed_version INTEGER, feed_version INTEGER,
        tier VARCHAR, subcategory VARCHAR, eval_type VARCHAR, instruction VARCHAR,
        options JSON, eval_config JSON, feed_edits VARCHAR, status VARCHAR, reasons JSON,
        ls_project_id INTEGER, ls_task_id INTEGER, ls_annotation_id INTEGER,
        annotation_sha256 VARCHAR, lead_time_s DOUBLE, annotated_at TIMESTAMP,
        run_id VARCHAR, created_at TIMESTAMP
    );
    """,
    """
    CREATE TABLE llm_calls (
        endpoint VARCHAR, model VARCHAR, prompt_sha256 VARCHAR, sample INTEGER,
        temperature DOUBLE, response VARCHAR, run_id VARCHAR, created_at TIMESTAMP
    );
    CREATE TABLE shortcut_verdicts (
        task_id VARCHAR, task_version INTEGER, verdict VARCHAR, rule VARCHAR,
        answers JSON, run_id VARCHAR, created_at TIMESTAMP
    );
    """,
    """
    CREATE VIEW latest_tasks AS
    SELECT * FROM tasks QUALIFY version = max(version) OVER (PARTITION BY task_id);
    """,
    # 7: failed runs say why; duplicates that older code could write (a reject per re-run, a comment id
    # twice in one thread, one model answer twice) are reduced to the latest, so that keys can be declared
    """
    ALTER TABLE runs ADD COLUMN error VARCHAR;
    ALTER TABLE shortcut_verdicts ADD COLUMN config_sha256 VARCHAR DEFAULT 'before-schema-7';
    DELETE FROM runs WHERE rowid NOT IN (SELECT max(rowid) FROM runs GROUP BY run_id);
    DELETE FROM videos WHERE rowid NOT IN (SELECT max(rowid) FROM videos GROUP BY video_id);
    DELETE FROM comments WHERE rowid NOT IN (SELECT max(rowid) FROM comments GROUP BY video_id, comment_id);
    DELETE FROM rejects WHERE rowid NOT IN (SELECT max(rowid) FROM rejects GROUP BY stage, source, raw_ref);
    DELETE FROM keyword_sets WHERE rowid NOT IN (SELECT max(rowid) FROM keyword_sets GROUP BY video_id);
    DELETE FROM embeddings WHERE rowid NOT IN (
        SELECT max(rowid) FROM embeddings GROUP BY model_id, text_sha256);
    DELETE FROM clusters WHERE rowid NOT IN (SELECT max(rowid) FROM clusters GROUP BY run_id, cluster_id);
    DELETE FROM cluster_members WHERE rowid NOT IN (
        SELECT max(rowid) FROM cluster_members GROUP BY run_id, video_id);
    DELETE FROM feeds WHERE rowid NOT IN (SELECT max(rowid) FROM feeds GROUP BY feed_id, version);
    DELETE FROM media_files WHERE rowid NOT IN (SELECT max(rowid) FROM media_files GROUP BY video_id);
    DELETE FROM media_probes WHERE rowid NOT IN (SELECT max(rowid) FROM media_probes GROUP BY video_id);
    DELETE FROM media_outputs WHERE rowid NOT IN (SELECT max(rowid) FROM media_outputs GROUP BY video_id);
    DELETE FROM ls_projects WHERE rowid NOT IN (
        SELECT max(rowid) FROM ls_projects GROUP BY base_url, project_id);
    DELETE FROM ls_tasks WHERE rowid NOT IN (SELECT max(rowid) FROM ls_tasks GROUP BY base_url, ls_task_id);
    DELETE FROM tasks WHERE rowid NOT IN (SELECT max(rowid) FROM tasks GROUP BY task_id, version);
    DELETE FROM llm_calls WHERE rowid NOT IN (
        SELECT max(rowid) FROM llm_calls GROUP BY endpoint, model, prompt_sha256, sample, temperature);
    DELETE FROM shortcut_verdicts WHERE rowid NOT IN (
        SELECT max(rowid) FROM shortcut_verdicts GROUP BY task_id, task_version, config_sha256);
    """,
    # 8: declared keys (a duplicate cannot be written) and the latest feeds; a verdict belongs to a task
    # version under one filter configuration (rule, inspectors, prompt)
    """
    ALTER TABLE runs ADD PRIMARY KEY (run_id);
    ALTER TABLE videos ADD PRIMARY KEY (video_id);
    ALTER TABLE comments ADD PRIMARY KEY (video_id, comment_id);
    ALTER TABLE rejects ADD PRIMARY KEY (stage, source, raw_ref);
    ALTER TABLE keyword_sets ADD PRIMARY KEY (video_id);
    ALTER TABLE embeddings ADD PRIMARY KEY (model_id, text_sha256);
    ALTER TABLE clusters ADD PRIMARY KEY (run_id, cluster_id);
    ALTER TABLE cluster_members ADD PRIMARY KEY (run_id, video_id);
    ALTER TABLE feeds ADD PRIMARY KEY (feed_id, version);
    ALTER TABLE media_files ADD PRIMARY KEY (video_id);
    ALTER TABLE media_probes ADD PRIMARY KEY (video_id);
    ALTER TABLE media_outputs ADD PRIMARY KEY (video_id);
    ALTER TABLE ls_projects ADD PRIMARY KEY (base_url, project_id);
    ALTER TABLE ls_tasks ADD PRIMARY KEY (base_url, ls_task_id);
    ALTER TABLE tasks ADD PRIMARY KEY (task_id, version);
    ALTER TABLE llm_calls ADD PRIMARY KEY (endpoint, model, prompt_sha256, sample, temperature);
    ALTER TABLE shortcut_verdicts ADD PRIMARY KEY (task_id, task_version, config_sha256);
    CREATE UNIQUE INDEX ls_projects_annotator ON ls_projects (base_url, annotator);
    CREATE VIEW latest_feeds AS
    SELECT * FROM feeds QUALIFY version = max(version) OVER (PARTITION BY feed_id);
    """,
    # 9: each annotator works in a Label Studio organization of their own
    """
    ALTER TABLE ls_projects ADD COLUMN organization_id INTEGER;
    ALTER TABLE ls_projects ADD COLUMN annotator_user_id INTEGER;
    """,
    # 10: the task life cycle (curation/qc/lifecycle.py); tasks already there get the path they took
    """
    CREATE TABLE task_transitions (
        task_id VARCHAR NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL, from_state VARCHAR,
        to_state VARCHAR NOT NULL, reason VARCHAR, who VARCHAR, run_id VARCHAR, moved_at TIMESTAMP,
        PRIMARY KEY (task_id, version, seq)
    );
    INSERT INTO task_transitions (task_id, version, seq, from_state, to_state, reason, who, run_id, moved_at)
    SELECT task_id, version, 1, NULL, 'authored', NULL, author, run_id, created_at FROM tasks;
    INSERT INTO task_transitions (task_id, version, seq, from_state, to_state, reason, who, run_id, moved_at)
    SELECT task_id, version, 2, 'authored', CASE WHEN status = 'needs_fix' THEN 'needs_fix' ELSE 'valid' END,
           CAST(reasons AS VARCHAR), 'annotate-import', run_id, created_at FROM tasks;
    INSERT INTO task_transitions (task_id, version, seq, from_state, to_state, reason, who, run_id, moved_at)
    SELECT v.task_id, v.task_version, 3, 'valid', any_value(v.verdict ORDER BY v.created_at DESC),
           'shortcut filter (before the life cycle)', 'qc-shortcut', any_value(v.run_id ORDER BY v.created_at DESC),
           max(v.created_at)
    FROM shortcut_verdicts v JOIN tasks t ON t.task_id = v.task_id AND t.version = v.task_version
    WHERE t.status <> 'needs_fix' GROUP BY v.task_id, v.task_version;
    CREATE VIEW task_states AS
    SELECT task_id, version, to_state AS state, moved_at AS since FROM task_transitions
    QUALIFY seq = max(seq) OVER (PARTITION BY task_id, version);
    """,
    # 11: the QC projects beyond authoring (pilot, review, adjudication), what was sent to them,
    # and what came back: calibration answers, blind reviews, group decisions
    """
    CREATE TABLE qc_projects (
        base_url VARCHAR NOT NULL, project_id INTEGER NOT NULL, purpose VARCHAR NOT NULL, person VARCHAR NOT NULL,
        organization_id INTEGER, user_id INTEGER, title VARCHAR, config_sha256 VARCHAR, run_id VARCHAR,
        PRIMARY KEY (base_url, project_id)
    );
    CREATE UNIQUE INDEX qc_projects_person ON qc_projects (base_url, purpose, person);
    CREATE TABLE qc_items (
        base_url VARCHAR NOT NULL, ls_task_id INTEGER NOT NULL, project_id INTEGER, purpose VARCHAR,
        person VARCHAR, round VARCHAR, item VARCHAR, task_id VARCHAR, task_version INTEGER,
        feed_id VARCHAR, feed_version INTEGER, question JSON, run_id VARCHAR, created_at TIMESTAMP,
        PRIMARY KEY (base_url, ls_task_id)
    );
    CREATE TABLE calibration_answers (
        round VARCHAR NOT NULL, item VARCHAR NOT NULL, annotator VARCHAR NOT NULL, tier VARCHAR,
        subcategory VARCHAR, answer VARCHAR, instruction VARCHAR, ls_annotation_id INTEGER,
        annotation_sha256 VARCHAR, run_id VARCHAR, created_at TIMESTAMP,
        PRIMARY KEY (round, item, annotator)
    );
    CREATE TABLE reviews (
        task_id VARCHAR NOT NULL, task_version INTEGER NOT NULL, reviewer VARCHAR, answer VARCHAR,
        platform_state VARCHAR, flags VARCHAR[], comment VARCHAR, outcome VARCHAR, reason VARCHAR,
        ls_task_id INTEGER, ls_annotation_id INTEGER, annotation_sha256 VARCHAR, run_id VARCHAR,
        created_at TIMESTAMP, PRIMARY KEY (task_id, task_version)
    );
    CREATE TABLE decisions (
        task_id VARCHAR NOT NULL, task_version INTEGER NOT NULL, decision VARCHAR, delete_reasons VARCHAR[],
        note VARCHAR, decided_by VARCHAR, revised_version INTEGER, ls_task_id INTEGER, ls_annotation_id INTEGER,
        annotation_sha256 VARCHAR, run_id VARCHAR, created_at TIMESTAMP, PRIMARY KEY (task_id, task_version)
    );
    """,
    # 12: releases (built here or imported), what each holds in the runner's format, stable pseudonyms
    # for the people named in them, where they were published; videos known only from a release
    """
    CREATE TABLE releases (
        version VARCHAR NOT NULL PRIMARY KEY, parent VARCHAR, origin VARCHAR, path VARCHAR,
        content_sha256 VARCHAR, manifest_sha256 VARCHAR, tasks INTEGER, run_id VARCHAR, created_at TIMESTAMP
    );
    CREATE TABLE release_tasks (
        version VARCHAR NOT NULL, runner_file VARCHAR NOT NULL, position INTEGER NOT NULL, task_id VARCHAR,
        task_version INTEGER, content_sha256 VARCHAR, runner JSON, PRIMARY KEY (version, runner_file, position)
    );
    CREATE TABLE pseudonyms (
        person VARCHAR NOT NULL PRIMARY KEY, pseudonym VARCHAR NOT NULL UNIQUE, created_at TIMESTAMP
    );
    CREATE TABLE publications (
        version VARCHAR NOT NULL, endpoint VARCHAR NOT NULL, repo VARCHAR NOT NULL, tag VARCHAR,
        commit_oid VARCHAR, run_id VARCHAR, published_at TIMESTAMP, PRIMARY KEY (version, endpoint, repo)
    );
    ALTER TABLE videos ADD COLUMN metadata_missing BOOLEAN DEFAULT false;
    """,
    # 13: graded episodes of the public runner, per release, model and task; trajectory audits
    """
    CREATE TABLE episode_grades (
        release VARCHAR NOT NULL, model VARCHAR NOT NULL, task_id VARCHAR NOT NULL, log_path VARCHAR,
        tier VARCHAR, subcategory VARCHAR, eval_type VARCHAR, sr DOUBLE, sr_from VARCHAR, public_sr DOUBLE,
        logged_result DOUBLE, ns INTEGER, invalid_calls INTEGER, watch_s DOUBLE, runtime_s DOUBLE, wr DOUBLE,
        progress DOUBLE, answer VARCHAR, answered_differently BOOLEAN, state_disagrees BOOLEAN,
        index0_disagrees BOOLEAN, watched DOUBLE[], buckets VARCHAR[], steps INTEGER, run_id VARCHAR,
        PRIMARY KEY (release, model, task_id)
    );
    CREATE TABLE audit_flags (
        release VARCHAR NOT NULL, model VARCHAR NOT NULL, task_id VARCHAR NOT NULL, position INTEGER NOT NULL,
        under_observed BOOLEAN, over_observed BOOLEAN, auditor VARCHAR, ls_task_id INTEGER,
        annotation_sha256 VARCHAR, run_id VARCHAR, created_at TIMESTAMP,
        PRIMARY KEY (release, model, task_id, position)
    );
    """,
    # 14: the record fingerprint was computed in SQL by name; 15 recomputes it, so this
    # step now does nothing (a catalog from before 14 would otherwise recompute twice)
    "SELECT 1",
    # 15: the fingerprint hashes the values by position (a JSON array), not by name. The text is the
    # SQL that core/fingerprint.py gave when this migration was released, kept as it ran: a later
    # change to the fingerprint comes with a migration of its own
    (
        "\n"
        "        UPDATE videos SET record_hash = h.record_hash\n"
        "        FROM (\n"
        "        SELECT v.video_id, sha256(to_json(row(v.video_id, v.source, v.native_id, v.title, "
        "v.description, v.hashtags, v.keywords, v.author_name, v.author_bio, v.author_verified, "
        "v.like_count, v.comment_count, v.collect_count, v.share_count, v.duration_s, v.published_at, "
        "v.label, v.category, v.synthetic, v.media_path, CAST(v.extra AS VARCHAR), "
        "t.thread))) AS record_hash\n"
        "        FROM videos v LEFT JOIN (\n"
        "            SELECT video_id, list(struct_pack(comment_id, parent_id, author, text, like_count, "
        "time_s, created_at) ORDER BY comment_id) AS thread\n"
        "            FROM comments WHERE video_id IN (SELECT video_id FROM videos) GROUP BY video_id\n"
        "        ) t USING (video_id)) h\n"
        "        WHERE videos.video_id = h.video_id"
    ),
    # 16: videos and comments without a primary key. DuckDB deletes an indexed row at about
    # 16 µs (a re-ingest that updated a million counts spent 16 s deleting) and cannot drop
    # the key, hence the copy; the stage runner checks their keys instead (UNIQUE_KEYS, below)
    """
    CREATE TABLE videos_keyless (
        video_id VARCHAR NOT NULL, source VARCHAR NOT NULL, native_id VARCHAR NOT NULL,
        title VARCHAR, description VARCHAR, hashtags VARCHAR[], keywords VARCHAR[],
        author_name VARCHAR, author_bio VARCHAR, author_verified BOOLEAN,
        like_count BIGINT, comment_count BIGINT, collect_count BIGINT, share_count BIGINT,
        duration_s DOUBLE, published_at TIMESTAMP, label VARCHAR, category VARCHAR,
        synthetic BOOLEAN NOT NULL DEFAULT false, media_path VARCHAR,
        raw_ref VARCHAR, ingest_run VARCHAR, extra JSON, record_hash VARCHAR,
        metadata_missing BOOLEAN DEFAULT false
    );
    INSERT INTO videos_keyless BY NAME SELECT * FROM videos;
    DROP TABLE videos;
    ALTER TABLE videos_keyless RENAME TO videos;
    CREATE TABLE comments_keyless (
        comment_id VARCHAR NOT NULL, video_id VARCHAR NOT NULL, parent_id VARCHAR,
        author VARCHAR, text VARCHAR, like_count BIGINT, time_s DOUBLE,
        created_at TIMESTAMP, ingest_run VARCHAR
    );
    INSERT INTO comments_keyless BY NAME SELECT * FROM comments;
    DROP TABLE comments;
    ALTER TABLE comments_keyless RENAME TO comments;
    """,
    # 17: the life cycle is the only task state (curation/tasks/lifecycle.py): `tasks.status` and
    # `tasks.reasons` go. Every needs_fix they recorded is a needs_fix move with the same reasons
    # already; the one thing they held alone, a needs_fix set in place on a version whose life cycle
    # said otherwise, becomes that move now.
    """
    INSERT INTO task_transitions (task_id, version, seq, from_state, to_state, reason, who, run_id, moved_at)
    SELECT t.task_id, t.version, s.seq + 1, s.to_state, 'needs_fix', CAST(t.reasons AS VARCHAR), 'schema-17',
           NULL, now()
    FROM tasks t JOIN (SELECT task_id, version, to_state, seq FROM task_transitions
                       QUALIFY seq = max(seq) OVER (PARTITION BY task_id, version)) s
      ON s.task_id = t.task_id AND s.version = t.version
    WHERE t.status = 'needs_fix' AND s.to_state <> 'needs_fix';
    DROP VIEW latest_tasks;
    ALTER TABLE tasks DROP COLUMN status;
    ALTER TABLE tasks DROP COLUMN reasons;
    CREATE VIEW latest_tasks AS
    SELECT * FROM tasks QUALIFY version = max(version) OVER (PARTITION BY task_id);
    """,
    # 18: a graded episode says why its final state is unknown (the replay of its log could not place an
    # action) and why its task is defective (the task rules, or a state outside the released ones)
    """
    ALTER TABLE episode_grades ADD COLUMN state_unknown VARCHAR;
    ALTER TABLE episode_grades ADD COLUMN defective VARCHAR;
    """,
    # 19: the people whose Label Studio accounts the toolkit made or used. Options that name people
    # accept only known names (a typo must not become a new account); the deciding group's members
    # have no project of their own, so this is where they are known from
    """
    CREATE TABLE people (name VARCHAR NOT NULL PRIMARY KEY, added_at TIMESTAMP, run_id VARCHAR);
    """,
    # 20: a failed run keeps its traceback beside the one-line error: an unexpected exception is a bug
    # to be read later, and the CLI prints only where it is kept
    "ALTER TABLE runs ADD COLUMN traceback VARCHAR;",
    # 21: verdicts of record (curation/qc/shortcut/record.py). Every shortcut-filter configuration that ran,
    # with the file it came from; the history of the configuration of record (the first run sets it, only
    # `qc shortcut-config adopt` changes it); and which verdict decided each task version. Decisions made
    # before this schema are read back from the moves they caused; no configuration is of record until the
    # next run sets one.
    """
    CREATE TABLE shortcut_configs (
        config_sha256 VARCHAR NOT NULL PRIMARY KEY, config JSON NOT NULL, source VARCHAR, first_run_id VARCHAR,
        created_at TIMESTAMP
    );
    CREATE TABLE shortcut_config_record (
        seq INTEGER NOT NULL PRIMARY KEY, config_sha256 VARCHAR NOT NULL, source VARCHAR, run_id VARCHAR,
        adopted_at TIMESTAMP
    );
    CREATE TABLE shortcut_decisions (
        task_id VARCHAR NOT NULL, task_version INTEGER NOT NULL, seq INTEGER NOT NULL,
        config_sha256 VARCHAR NOT NULL, reason VARCHAR, run_id VARCHAR, decided_at TIMESTAMP,
        PRIMARY KEY (task_id, task_version, seq)
    );
    INSERT INTO shortcut_decisions (task_id, task_version, seq, config_sha256, reason, run_id, decided_at)
    SELECT x.task_id, x.version, 1, v.config_sha256, 'decided before verdicts of record (schema 21)', x.run_id,
           x.moved_at
    FROM task_transitions x JOIN shortcut_verdicts v
      ON v.task_id = x.task_id AND v.task_version = x.version AND v.verdict = x.to_state
     AND (v.config_sha256 = split_part(x.who, ' ', 2) OR v.run_id = x.run_id)
    WHERE x.to_state IN ('shortcut_passed', 'shortcut_discarded') AND x.who LIKE 'qc-shortcut%'
    QUALIFY row_number() OVER (PARTITION BY x.task_id, x.version ORDER BY x.seq DESC, v.created_at DESC) = 1;
    CREATE VIEW shortcut_verdicts_of_record AS
    SELECT v.*, d.seq AS decision_seq, d.reason AS decision_reason, d.run_id AS decision_run_id, d.decided_at
    FROM shortcut_verdicts v JOIN (SELECT * FROM shortcut_decisions
                                   QUALIFY seq = max(seq) OVER (PARTITION BY task_id, task_version)) d
      ON d.task_id = v.task_id AND d.task_version = v.task_version AND d.config_sha256 = v.config_sha256;
    """,
    """
    -- one name for the column naming the run that wrote a row: run_id
    ALTER TABLE videos RENAME COLUMN ingest_run TO run_id;
    ALTER TABLE comments RENAME COLUMN ingest_run TO run_id;
    ALTER TABLE shortcut_configs RENAME COLUMN first_run_id TO run_id;
    -- a description of every table, view and column, kept in the catalog itself (`curate schema`)
    COMMENT ON TABLE audit_flags IS
        'One auditor''s observation verdict on one graded episode (grade audit import): under- or over-observed.';
    COMMENT ON COLUMN audit_flags.release IS 'The release version the episode was graded against.';
    COMMENT ON COLUMN audit_flags.model IS 'The model (agent) whose episode this is.';
    COMMENT ON COLUMN audit_flags.task_id IS 'The task the episode played.';
    COMMENT ON COLUMN audit_flags.position IS 'Which of the auditor''s answers on this episode (0 = the first).';
    COMMENT ON COLUMN audit_flags.under_observed IS
        'The auditor found the agent answered or acted before watching enough.';
    COMMENT ON COLUMN audit_flags.over_observed IS
        'The auditor found the agent watched far more than the task needed.';
    COMMENT ON COLUMN audit_flags.auditor IS 'The person who audited, by name.';
    COMMENT ON COLUMN audit_flags.ls_task_id IS 'The Label Studio task the audit was answered on.';
    COMMENT ON COLUMN audit_flags.annotation_sha256 IS
        'Hash of the Label Studio answer, to notice an edited answer on re-import.';
    COMMENT ON COLUMN audit_flags.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN audit_flags.created_at IS 'When the row was written (UTC).';
    COMMENT ON TABLE calibration_answers IS
        'An annotator''s answer to one pilot question in a calibration round (qc calibrate import).';
    COMMENT ON COLUMN calibration_answers.round IS 'The calibration round''s name.';
    COMMENT ON COLUMN calibration_answers.item IS 'The pilot question within the round.';
    COMMENT ON COLUMN calibration_answers.annotator IS 'The person who answered, by name.';
    COMMENT ON COLUMN calibration_answers.tier IS 'The task tier (L1, L2, L3) the annotator chose.';
    COMMENT ON COLUMN calibration_answers.subcategory IS 'The sub-category the annotator chose.';
    COMMENT ON COLUMN calibration_answers.answer IS 'The answer the annotator gave.';
    COMMENT ON COLUMN calibration_answers.instruction IS
        'The instruction the annotator wrote, if the question asked for one.';
    COMMENT ON COLUMN calibration_answers.ls_annotation_id IS 'The Label Studio annotation this row was read from.';
    COMMENT ON COLUMN calibration_answers.annotation_sha256 IS
        'Hash of the Label Studio answer, to notice an edited answer on re-import.';
    COMMENT ON COLUMN calibration_answers.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN calibration_answers.created_at IS 'When the row was written (UTC).';
    COMMENT ON TABLE cluster_members IS 'Which cluster each video fell in, per cluster run.';
    COMMENT ON COLUMN cluster_members.run_id IS 'The cluster run (runs.run_id) this membership belongs to.';
    COMMENT ON COLUMN cluster_members.video_id IS 'The video (videos.video_id).';
    COMMENT ON COLUMN cluster_members.cluster_id IS 'The cluster within the run; -1 is noise (no cluster).';
    COMMENT ON COLUMN cluster_members.probability IS
        'HDBSCAN''s membership strength of the video in its cluster (0-1).';
    COMMENT ON TABLE clusters IS 'One cluster of videos found by a cluster run, with its summary.';
    COMMENT ON COLUMN clusters.run_id IS 'The cluster run (runs.run_id) that found the cluster.';
    COMMENT ON COLUMN clusters.cluster_id IS 'The cluster''s number within its run.';
    COMMENT ON COLUMN clusters.size IS 'How many videos the cluster holds.';
    COMMENT ON COLUMN clusters.top_keywords IS
        'The keywords most frequent among the cluster''s videos, most frequent first.';
    COMMENT ON COLUMN clusters.medoid_video IS 'The video nearest the cluster''s centre.';
    COMMENT ON COLUMN clusters.mean_similarity IS
        'Mean cosine similarity of the members'' vectors to the cluster''s centre.';
    COMMENT ON TABLE comments IS 'A comment (or reply) on a video as the corpus gave it.';
    COMMENT ON COLUMN comments.comment_id IS
        'The comment''s id: the corpus''s own, or one derived from its position when the corpus has none.';
    COMMENT ON COLUMN comments.video_id IS 'The video commented on (videos.video_id).';
    COMMENT ON COLUMN comments.parent_id IS 'The comment this one replies to, or NULL for a top-level comment.';
    COMMENT ON COLUMN comments.author IS 'The commenter''s name as the corpus gave it.';
    COMMENT ON COLUMN comments.text IS 'The comment''s text.';
    COMMENT ON COLUMN comments.like_count IS 'Likes on the comment, when the corpus has them.';
    COMMENT ON COLUMN comments.time_s IS
        'For live-stream comments (danmaku): the second of the video it was sent at.';
    COMMENT ON COLUMN comments.created_at IS 'When the comment was posted, when the corpus says.';
    COMMENT ON TABLE decisions IS
        'The group''s decision on an escalated task version (qc adjudicate import): keep, delete or revise.';
    COMMENT ON COLUMN decisions.task_id IS 'The task decided on.';
    COMMENT ON COLUMN decisions.task_version IS 'The version of the task decided on.';
    COMMENT ON COLUMN decisions.decision IS 'keep, delete or revise.';
    COMMENT ON COLUMN decisions.delete_reasons IS 'For a delete: the reasons the group ticked.';
    COMMENT ON COLUMN decisions.note IS 'The group''s free-text note.';
    COMMENT ON COLUMN decisions.decided_by IS 'The group member who submitted the decision, by name.';
    COMMENT ON COLUMN decisions.revised_version IS 'For a revise: the task version the revision created.';
    COMMENT ON COLUMN decisions.ls_task_id IS 'The Label Studio task the decision was made on.';
    COMMENT ON COLUMN decisions.ls_annotation_id IS 'The Label Studio annotation this row was read from.';
    COMMENT ON COLUMN decisions.annotation_sha256 IS
        'Hash of the Label Studio answer, to notice an edited answer on re-import.';
    COMMENT ON COLUMN decisions.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN decisions.created_at IS 'When the row was written (UTC).';
    COMMENT ON TABLE embeddings IS
        'A cached embedding of one text by one model; a text is never encoded twice by the same model.';
    COMMENT ON COLUMN embeddings.model_id IS 'The embedding model''s id (the [embedding] model setting).';
    COMMENT ON COLUMN embeddings.text_sha256 IS 'sha256 of the embedded text (keyword_sets.text_sha256).';
    COMMENT ON COLUMN embeddings.vector IS 'The normalised embedding vector.';
    COMMENT ON COLUMN embeddings.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON TABLE episode_grades IS 'One graded episode of one model on one task of a release (curate grade).';
    COMMENT ON COLUMN episode_grades.release IS 'The release version graded against.';
    COMMENT ON COLUMN episode_grades.model IS 'The model (agent) that played the episode.';
    COMMENT ON COLUMN episode_grades.task_id IS 'The task played.';
    COMMENT ON COLUMN episode_grades.log_path IS 'The runner''s log.json the grade was read from.';
    COMMENT ON COLUMN episode_grades.tier IS 'The task''s tier (L1, L2, L3).';
    COMMENT ON COLUMN episode_grades.subcategory IS 'The task''s sub-category.';
    COMMENT ON COLUMN episode_grades.eval_type IS
        'How the task is judged: label (an answer) or platform (the app''s state).';
    COMMENT ON COLUMN episode_grades.sr IS 'Success (1.0 or 0.0) as the toolkit grades it.';
    COMMENT ON COLUMN episode_grades.sr_from IS
        'Where the success came from: the recorded or rebuilt state, the answer, or the result the runner logged.';
    COMMENT ON COLUMN episode_grades.public_sr IS 'Success by the public runner''s own rule on the same evidence.';
    COMMENT ON COLUMN episode_grades.logged_result IS 'The result the runner wrote in its log, when it did.';
    COMMENT ON COLUMN episode_grades.ns IS 'Number of steps (tool calls) the agent took.';
    COMMENT ON COLUMN episode_grades.invalid_calls IS 'Tool calls that did not parse or fit their tool.';
    COMMENT ON COLUMN episode_grades.watch_s IS 'Seconds of video the agent watched through watch calls.';
    COMMENT ON COLUMN episode_grades.runtime_s IS 'The feed''s total video runtime in seconds.';
    COMMENT ON COLUMN episode_grades.wr IS 'Watch ratio: watched seconds over the feed''s runtime.';
    COMMENT ON COLUMN episode_grades.progress IS 'Share of the task''s checks that held at the end.';
    COMMENT ON COLUMN episode_grades.answer IS 'The first answer the agent gave (label tasks).';
    COMMENT ON COLUMN episode_grades.answered_differently IS
        'The agent gave more than one different answer (the first counts).';
    COMMENT ON COLUMN episode_grades.state_disagrees IS
        'The toolkit''s state, graded by the runner''s rule, differs from the runner''s logged result.';
    COMMENT ON COLUMN episode_grades.index0_disagrees IS
        'The runner''s index-0 miss: an extra action on video 0 its checks do not see.';
    COMMENT ON COLUMN episode_grades.watched IS 'Per video of the feed: seconds the agent watched it.';
    COMMENT ON COLUMN episode_grades.buckets IS 'Observation buckets per target video (under, enough, over).';
    COMMENT ON COLUMN episode_grades.steps IS 'Turns the episode took.';
    COMMENT ON COLUMN episode_grades.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN episode_grades.state_unknown IS
        'Why the platform state could not be rebuilt from the log, or NULL when it could.';
    COMMENT ON COLUMN episode_grades.defective IS
        'The task rules'' errors on this task, or NULL: such episodes are left out of summaries unless asked for.';
    COMMENT ON TABLE feeds IS
        'A feed: an anchor cluster''s videos plus unrelated distractors, shuffled; each edit is a new version.';
    COMMENT ON COLUMN feeds.feed_id IS 'The feed''s stable id.';
    COMMENT ON COLUMN feeds.version IS 'The feed''s version: 1 as built, one more for each edit.';
    COMMENT ON COLUMN feeds.anchor_cluster IS
        'The cluster (clusters.cluster_id) the feed''s keyword videos come from.';
    COMMENT ON COLUMN feeds.cluster_run IS 'The cluster run (runs.run_id) whose clusters the feed was built from.';
    COMMENT ON COLUMN feeds.keyword_videos IS 'The anchor cluster''s videos in the feed.';
    COMMENT ON COLUMN feeds.other_videos IS 'The unrelated distractor videos in the feed.';
    COMMENT ON COLUMN feeds.video_feed IS 'Every video of the feed in the order the app shows them.';
    COMMENT ON COLUMN feeds.ratio IS 'Distractors over keyword videos (0.5 to 2.0 when built).';
    COMMENT ON COLUMN feeds.seed IS 'The random seed the feed was built and shuffled with.';
    COMMENT ON COLUMN feeds.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN feeds.total_runtime_s IS 'Sum of the feed''s video durations in seconds, when known.';
    COMMENT ON COLUMN feeds.edit IS 'For an edited version: what changed and who changed it (JSON).';
    COMMENT ON COLUMN feeds.created_at IS 'When the version was written (UTC).';
    COMMENT ON TABLE keyword_sets IS
        'Each video''s keyword set, the text embedded for clustering, with each keyword''s origin.';
    COMMENT ON COLUMN keyword_sets.video_id IS 'The video (videos.video_id).';
    COMMENT ON COLUMN keyword_sets.keywords IS 'The keywords, in order.';
    COMMENT ON COLUMN keyword_sets.origins IS
        'Where each keyword came from (hashtag, corpus keyword, title extraction, ...), aligned with keywords.';
    COMMENT ON COLUMN keyword_sets.text IS 'The text embedded: the keywords joined.';
    COMMENT ON COLUMN keyword_sets.text_sha256 IS 'sha256 of text, the key of its cached embedding.';
    COMMENT ON COLUMN keyword_sets.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON VIEW latest_feeds IS 'Each feed at its latest version.';
    COMMENT ON VIEW latest_tasks IS 'Each task at its latest version.';
    COMMENT ON TABLE llm_calls IS
        'A cached answer of a language model to one prompt; a re-run asks again only what is not cached.';
    COMMENT ON COLUMN llm_calls.endpoint IS 'The server''s base URL.';
    COMMENT ON COLUMN llm_calls.model IS 'The model name sent to the server.';
    COMMENT ON COLUMN llm_calls.prompt_sha256 IS 'sha256 of the prompt sent.';
    COMMENT ON COLUMN llm_calls.sample IS 'Which sample of the same prompt (0 for the first).';
    COMMENT ON COLUMN llm_calls.temperature IS 'The sampling temperature asked for.';
    COMMENT ON COLUMN llm_calls.response IS 'The model''s raw answer text.';
    COMMENT ON COLUMN llm_calls.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN llm_calls.created_at IS 'When the answer arrived (UTC).';
    COMMENT ON TABLE ls_projects IS 'A Label Studio authoring project the toolkit made for one annotator.';
    COMMENT ON COLUMN ls_projects.base_url IS 'The Label Studio server''s URL.';
    COMMENT ON COLUMN ls_projects.annotator IS 'The annotator the project belongs to, by name.';
    COMMENT ON COLUMN ls_projects.project_id IS 'Label Studio''s project id.';
    COMMENT ON COLUMN ls_projects.title IS 'The project''s title in Label Studio.';
    COMMENT ON COLUMN ls_projects.config_sha256 IS 'Hash of the labelling config the project was made with.';
    COMMENT ON COLUMN ls_projects.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN ls_projects.organization_id IS
        'The Label Studio organisation that holds the project (one per person).';
    COMMENT ON COLUMN ls_projects.annotator_user_id IS 'The annotator''s Label Studio user id.';
    COMMENT ON TABLE ls_tasks IS 'A feed sent to an annotator''s authoring project as a Label Studio task.';
    COMMENT ON COLUMN ls_tasks.base_url IS 'The Label Studio server''s URL.';
    COMMENT ON COLUMN ls_tasks.project_id IS 'Label Studio''s project id.';
    COMMENT ON COLUMN ls_tasks.ls_task_id IS 'Label Studio''s task id.';
    COMMENT ON COLUMN ls_tasks.feed_id IS 'The feed sent.';
    COMMENT ON COLUMN ls_tasks.feed_version IS 'The feed''s version when sent.';
    COMMENT ON COLUMN ls_tasks.annotator IS 'The annotator it was sent to, by name.';
    COMMENT ON COLUMN ls_tasks.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON TABLE media_files IS 'A media file found for a video (media scan).';
    COMMENT ON COLUMN media_files.video_id IS 'The video (videos.video_id).';
    COMMENT ON COLUMN media_files.path IS 'The file''s path.';
    COMMENT ON COLUMN media_files.root IS 'The folder that was scanned.';
    COMMENT ON COLUMN media_files.matched_by IS 'How the file was matched to the video (file name, a mapping, ...).';
    COMMENT ON COLUMN media_files.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON TABLE media_outputs IS
        'A video normalised for the app''s canvas by ffmpeg (media normalise), with its poster and keyframes.';
    COMMENT ON COLUMN media_outputs.video_id IS 'The video (videos.video_id).';
    COMMENT ON COLUMN media_outputs.input_sha256 IS 'sha256 of the input file normalised.';
    COMMENT ON COLUMN media_outputs.settings_sha256 IS
        'Hash of the [media] settings it was normalised with: a change re-normalises.';
    COMMENT ON COLUMN media_outputs.output_path IS 'The normalised video''s path.';
    COMMENT ON COLUMN media_outputs.poster_path IS 'The poster image''s path.';
    COMMENT ON COLUMN media_outputs.frames_dir IS 'The folder of keyframes.';
    COMMENT ON COLUMN media_outputs.frames IS 'How many keyframes were written.';
    COMMENT ON COLUMN media_outputs.width IS 'Output width in pixels.';
    COMMENT ON COLUMN media_outputs.height IS 'Output height in pixels.';
    COMMENT ON COLUMN media_outputs.fps IS 'Output frame rate.';
    COMMENT ON COLUMN media_outputs.duration_s IS 'Output duration in seconds.';
    COMMENT ON COLUMN media_outputs.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON TABLE media_probes IS 'What ffprobe found in a video''s media file (media probe).';
    COMMENT ON COLUMN media_probes.video_id IS 'The video (videos.video_id).';
    COMMENT ON COLUMN media_probes.path IS 'The probed file''s path.';
    COMMENT ON COLUMN media_probes.sha256 IS 'sha256 of the file''s bytes.';
    COMMENT ON COLUMN media_probes.size_bytes IS 'The file''s size in bytes.';
    COMMENT ON COLUMN media_probes.container IS 'The container format.';
    COMMENT ON COLUMN media_probes.video_codec IS 'The video stream''s codec.';
    COMMENT ON COLUMN media_probes.audio_codec IS 'The audio stream''s codec, or NULL without audio.';
    COMMENT ON COLUMN media_probes.width IS 'Frame width in pixels (before rotation).';
    COMMENT ON COLUMN media_probes.height IS 'Frame height in pixels (before rotation).';
    COMMENT ON COLUMN media_probes.rotation IS 'The rotation the file asks players to apply, in degrees.';
    COMMENT ON COLUMN media_probes.fps IS 'The video stream''s frame rate.';
    COMMENT ON COLUMN media_probes.variable_fps IS 'The stream''s frame rate varies.';
    COMMENT ON COLUMN media_probes.duration_s IS 'Duration in seconds.';
    COMMENT ON COLUMN media_probes.has_audio IS 'The file has an audio stream.';
    COMMENT ON COLUMN media_probes.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON TABLE people IS
        'Everyone the team works with (annotators, reviewers, group members), by the name commands use.';
    COMMENT ON COLUMN people.name IS 'The person''s name as commands take it.';
    COMMENT ON COLUMN people.added_at IS 'When the person was added (UTC).';
    COMMENT ON COLUMN people.run_id IS 'The run (runs.run_id) that added the person.';
    COMMENT ON TABLE pseudonyms IS
        'The stable pseudonym shown instead of a person''s name where others see their work.';
    COMMENT ON COLUMN pseudonyms.person IS 'The person''s name.';
    COMMENT ON COLUMN pseudonyms.pseudonym IS 'The pseudonym.';
    COMMENT ON COLUMN pseudonyms.created_at IS 'When the pseudonym was made (UTC).';
    COMMENT ON TABLE publications IS 'A release published to a Hub repository, with the tag and commit it landed as.';
    COMMENT ON COLUMN publications.version IS 'The release version published.';
    COMMENT ON COLUMN publications.endpoint IS 'The Hub''s URL.';
    COMMENT ON COLUMN publications.repo IS 'The dataset repository (ORG/NAME).';
    COMMENT ON COLUMN publications.tag IS 'The git tag made for the release.';
    COMMENT ON COLUMN publications.commit_oid IS 'The commit the upload made.';
    COMMENT ON COLUMN publications.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN publications.published_at IS 'When it was published (UTC).';
    COMMENT ON TABLE qc_items IS
        'A QC item sent to Label Studio: a pilot question, a task to review, a case to decide, an episode to audit.';
    COMMENT ON COLUMN qc_items.base_url IS 'The Label Studio server''s URL.';
    COMMENT ON COLUMN qc_items.ls_task_id IS 'Label Studio''s task id.';
    COMMENT ON COLUMN qc_items.project_id IS 'Label Studio''s project id.';
    COMMENT ON COLUMN qc_items.purpose IS 'calibration, review, adjudication or audit.';
    COMMENT ON COLUMN qc_items.person IS 'The person (or group) it was sent to.';
    COMMENT ON COLUMN qc_items.round IS 'The calibration round, for pilot questions.';
    COMMENT ON COLUMN qc_items.item IS 'The pilot question, for calibration.';
    COMMENT ON COLUMN qc_items.task_id IS 'The task under review or adjudication.';
    COMMENT ON COLUMN qc_items.task_version IS 'The task version under review or adjudication.';
    COMMENT ON COLUMN qc_items.feed_id IS 'The feed shown with it.';
    COMMENT ON COLUMN qc_items.feed_version IS 'The feed version shown with it.';
    COMMENT ON COLUMN qc_items.question IS 'What was asked (JSON).';
    COMMENT ON COLUMN qc_items.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN qc_items.created_at IS 'When it was sent (UTC).';
    COMMENT ON TABLE qc_projects IS
        'A Label Studio project the QC stages made: a pilot, a review or an adjudication project.';
    COMMENT ON COLUMN qc_projects.base_url IS 'The Label Studio server''s URL.';
    COMMENT ON COLUMN qc_projects.project_id IS 'Label Studio''s project id.';
    COMMENT ON COLUMN qc_projects.purpose IS 'calibration, review, adjudication or audit.';
    COMMENT ON COLUMN qc_projects.person IS 'The person (or group) the project is for.';
    COMMENT ON COLUMN qc_projects.organization_id IS 'The Label Studio organisation that holds it.';
    COMMENT ON COLUMN qc_projects.user_id IS 'The person''s Label Studio user id.';
    COMMENT ON COLUMN qc_projects.title IS 'The project''s title in Label Studio.';
    COMMENT ON COLUMN qc_projects.config_sha256 IS 'Hash of the labelling config the project was made with.';
    COMMENT ON COLUMN qc_projects.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON TABLE rejects IS
        'A record a stage refused, with the reason and the raw input: counts in = accepted + rejected.';
    COMMENT ON COLUMN rejects.run_id IS 'The run (runs.run_id) that refused it (the latest, when refused again).';
    COMMENT ON COLUMN rejects.stage IS 'The stage that refused it.';
    COMMENT ON COLUMN rejects.source IS 'The corpus or source the record came from.';
    COMMENT ON COLUMN rejects.raw_ref IS 'Where the record sits in its input (file and line, or key).';
    COMMENT ON COLUMN rejects.record_id IS 'The record''s id, when one could be read.';
    COMMENT ON COLUMN rejects.reason IS 'Why it was refused, in one line.';
    COMMENT ON COLUMN rejects.raw IS 'The record''s raw bytes as read.';
    COMMENT ON TABLE release_tasks IS
        'Each element of a release''s runner files: which task version it is, and its exact content.';
    COMMENT ON COLUMN release_tasks.version IS 'The release version.';
    COMMENT ON COLUMN release_tasks.runner_file IS 'The runner file the element is in (gui_action.json, ...).';
    COMMENT ON COLUMN release_tasks.position IS 'The element''s position in that file.';
    COMMENT ON COLUMN release_tasks.task_id IS 'The task.';
    COMMENT ON COLUMN release_tasks.task_version IS 'The task version shipped.';
    COMMENT ON COLUMN release_tasks.content_sha256 IS 'sha256 of the element''s canonical JSON.';
    COMMENT ON COLUMN release_tasks.runner IS 'The element as the runner reads it (JSON).';
    COMMENT ON TABLE releases IS 'A release: built here from the catalog or imported from published runner files.';
    COMMENT ON COLUMN releases.version IS 'The release''s semantic version.';
    COMMENT ON COLUMN releases.parent IS 'The release it follows, or NULL.';
    COMMENT ON COLUMN releases.origin IS 'built or imported.';
    COMMENT ON COLUMN releases.path IS 'The release''s folder.';
    COMMENT ON COLUMN releases.content_sha256 IS 'Hash of the release''s tasks, the same for the same content.';
    COMMENT ON COLUMN releases.manifest_sha256 IS 'sha256 of the release''s manifest.json.';
    COMMENT ON COLUMN releases.tasks IS 'How many tasks it ships.';
    COMMENT ON COLUMN releases.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN releases.created_at IS 'When it was recorded (UTC).';
    COMMENT ON TABLE reviews IS 'A second annotator''s blind review of a task version (qc review import).';
    COMMENT ON COLUMN reviews.task_id IS 'The task reviewed.';
    COMMENT ON COLUMN reviews.task_version IS 'The version reviewed.';
    COMMENT ON COLUMN reviews.reviewer IS 'The reviewer, by name.';
    COMMENT ON COLUMN reviews.answer IS 'The reviewer''s own answer (label tasks).';
    COMMENT ON COLUMN reviews.platform_state IS
        'The reviewer''s own platform state (platform tasks), in the authoring syntax.';
    COMMENT ON COLUMN reviews.flags IS 'Problems the reviewer ticked.';
    COMMENT ON COLUMN reviews.comment IS 'The reviewer''s comment.';
    COMMENT ON COLUMN reviews.outcome IS 'agree or escalate.';
    COMMENT ON COLUMN reviews.reason IS 'Why the review escalated, in one line.';
    COMMENT ON COLUMN reviews.ls_task_id IS 'The Label Studio task reviewed on.';
    COMMENT ON COLUMN reviews.ls_annotation_id IS 'The Label Studio annotation this row was read from.';
    COMMENT ON COLUMN reviews.annotation_sha256 IS
        'Hash of the Label Studio answer, to notice an edited answer on re-import.';
    COMMENT ON COLUMN reviews.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN reviews.created_at IS 'When the row was written (UTC).';
    COMMENT ON TABLE runs IS 'Every stage run: its parameters, code version, counts and how it ended.';
    COMMENT ON COLUMN runs.run_id IS 'The run''s id (<stage>-<timestamp>-<random>).';
    COMMENT ON COLUMN runs.stage IS 'The stage that ran.';
    COMMENT ON COLUMN runs.params IS 'The run''s parameters (JSON; secrets are never here).';
    COMMENT ON COLUMN runs.code_version IS 'The toolkit''s version and git commit.';
    COMMENT ON COLUMN runs.started_at IS 'When it started (UTC).';
    COMMENT ON COLUMN runs.finished_at IS 'When it ended (UTC), or NULL while running.';
    COMMENT ON COLUMN runs.status IS 'running, ok, failed or interrupted.';
    COMMENT ON COLUMN runs.counts IS 'What the run counted (JSON): read, accepted, rejected, ...';
    COMMENT ON COLUMN runs.error IS 'For a failed run: the error in one line.';
    COMMENT ON COLUMN runs.traceback IS 'For a run failed by a bug: the traceback.';
    COMMENT ON TABLE schema_migrations IS
        'Which schema migrations this catalog has run (curation/core/migrations.py).';
    COMMENT ON COLUMN schema_migrations.version IS 'The migration''s number.';
    COMMENT ON COLUMN schema_migrations.applied_at IS 'When it ran (UTC).';
    COMMENT ON TABLE shortcut_config_record IS
        'Which shortcut-filter configuration is of record, and when each was adopted.';
    COMMENT ON COLUMN shortcut_config_record.seq IS 'Order of adoption (the highest is in force).';
    COMMENT ON COLUMN shortcut_config_record.config_sha256 IS 'The configuration adopted (shortcut_configs).';
    COMMENT ON COLUMN shortcut_config_record.source IS
        'Where the configuration came from (file and how it was found).';
    COMMENT ON COLUMN shortcut_config_record.run_id IS 'The run (runs.run_id) that adopted it.';
    COMMENT ON COLUMN shortcut_config_record.adopted_at IS 'When it was adopted (UTC).';
    COMMENT ON TABLE shortcut_configs IS
        'Every shortcut-filter configuration that ran, by hash (secrets only by variable name).';
    COMMENT ON COLUMN shortcut_configs.config_sha256 IS 'Hash of the configuration.';
    COMMENT ON COLUMN shortcut_configs.config IS 'The configuration (JSON).';
    COMMENT ON COLUMN shortcut_configs.source IS
        'Where it came from (file and how it was found, CURATE__ variables).';
    COMMENT ON COLUMN shortcut_configs.created_at IS 'When it was first seen (UTC).';
    COMMENT ON TABLE shortcut_decisions IS
        'A move of a task version made on the shortcut filter''s verdict of record.';
    COMMENT ON COLUMN shortcut_decisions.task_id IS 'The task.';
    COMMENT ON COLUMN shortcut_decisions.task_version IS 'The task version.';
    COMMENT ON COLUMN shortcut_decisions.seq IS 'Order of decisions on this version.';
    COMMENT ON COLUMN shortcut_decisions.config_sha256 IS 'The configuration whose verdict decided.';
    COMMENT ON COLUMN shortcut_decisions.reason IS 'Why (first verdict, adoption of another configuration, ...).';
    COMMENT ON COLUMN shortcut_decisions.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN shortcut_decisions.decided_at IS 'When (UTC).';
    COMMENT ON TABLE shortcut_verdicts IS
        'The metadata-only shortcut filter''s verdict on a task version under one configuration, with its answers.';
    COMMENT ON COLUMN shortcut_verdicts.task_id IS 'The task.';
    COMMENT ON COLUMN shortcut_verdicts.task_version IS 'The task version.';
    COMMENT ON COLUMN shortcut_verdicts.verdict IS 'shortcut_passed, shortcut_discarded or undecided.';
    COMMENT ON COLUMN shortcut_verdicts.rule IS
        'The rule that combined the inspectors'' answers (paper, any, majority, ...).';
    COMMENT ON COLUMN shortcut_verdicts.answers IS
        'Each inspector''s answers: raw text, parsed answer, correct or not (JSON).';
    COMMENT ON COLUMN shortcut_verdicts.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN shortcut_verdicts.created_at IS 'When (UTC).';
    COMMENT ON COLUMN shortcut_verdicts.config_sha256 IS
        'The configuration (shortcut_configs) the verdict was made under.';
    COMMENT ON VIEW shortcut_verdicts_of_record IS
        'Each task version''s shortcut verdict under the configuration of record.';
    COMMENT ON VIEW task_states IS 'Each task version''s current state: its latest life-cycle move.';
    COMMENT ON TABLE task_transitions IS
        'The task life cycle: every move of a task version from one state to another, with why and who.';
    COMMENT ON COLUMN task_transitions.task_id IS 'The task.';
    COMMENT ON COLUMN task_transitions.version IS 'The task version.';
    COMMENT ON COLUMN task_transitions.seq IS 'Order of moves of this version.';
    COMMENT ON COLUMN task_transitions.from_state IS 'The state before, or NULL for the first move.';
    COMMENT ON COLUMN task_transitions.to_state IS 'The state after.';
    COMMENT ON COLUMN task_transitions.reason IS 'Why, in one line (rule codes, the reviewer''s reason, ...).';
    COMMENT ON COLUMN task_transitions.who IS 'The stage or person that moved it.';
    COMMENT ON COLUMN task_transitions.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN task_transitions.moved_at IS 'When (UTC).';
    COMMENT ON TABLE tasks IS
        'A task version: an instruction written on a feed with its ground truth; a change is a new version.';
    COMMENT ON COLUMN tasks.task_id IS 'The task''s id (<subcategory>_<n>).';
    COMMENT ON COLUMN tasks.version IS 'The version: 1 as first written, one more for each update or revision.';
    COMMENT ON COLUMN tasks.author IS 'Who wrote it, by name (or the release it was imported from).';
    COMMENT ON COLUMN tasks.feed_id IS 'The feed the task is played on.';
    COMMENT ON COLUMN tasks.base_feed_version IS 'The feed version the annotator was shown.';
    COMMENT ON COLUMN tasks.feed_version IS 'The feed version the task points at (after the annotator''s own edits).';
    COMMENT ON COLUMN tasks.tier IS
        'L1 (GUI action), L2 (cross-source understanding) or L3 (closed-end application).';
    COMMENT ON COLUMN tasks.subcategory IS 'The taxonomy''s sub-category.';
    COMMENT ON COLUMN tasks.eval_type IS
        'label (a multiple-choice answer) or platform (a declarative platform state).';
    COMMENT ON COLUMN tasks.instruction IS 'The instruction the agent is given.';
    COMMENT ON COLUMN tasks.options IS 'For label tasks: the options by letter (JSON).';
    COMMENT ON COLUMN tasks.eval_config IS
        'The ground truth in the runner''s form: the answer, or the platform checks (JSON).';
    COMMENT ON COLUMN tasks.feed_edits IS 'The annotator''s edits to the feed, as written.';
    COMMENT ON COLUMN tasks.ls_project_id IS 'The Label Studio project it was written in.';
    COMMENT ON COLUMN tasks.ls_task_id IS 'The Label Studio task it was written on.';
    COMMENT ON COLUMN tasks.ls_annotation_id IS
        'The Label Studio annotation it was read from: the task''s identity across updates.';
    COMMENT ON COLUMN tasks.annotation_sha256 IS 'Hash of the Label Studio answer, to notice an update.';
    COMMENT ON COLUMN tasks.lead_time_s IS 'Seconds the annotator spent, as Label Studio measured.';
    COMMENT ON COLUMN tasks.annotated_at IS 'When the annotator submitted it.';
    COMMENT ON COLUMN tasks.run_id IS 'The run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN tasks.created_at IS 'When the version was written (UTC).';
    COMMENT ON TABLE videos IS
        'A video of a public corpus with its metadata; every field the corpus had is kept (extra holds the rest).';
    COMMENT ON COLUMN videos.video_id IS '<source>/<native id>: the video''s id across the catalog.';
    COMMENT ON COLUMN videos.source IS 'The corpus (FakeSV, KuaiRec, LiveBot, or a generic mapping''s source).';
    COMMENT ON COLUMN videos.native_id IS 'The corpus''s own id.';
    COMMENT ON COLUMN videos.title IS 'The title.';
    COMMENT ON COLUMN videos.description IS 'The description or caption text.';
    COMMENT ON COLUMN videos.hashtags IS 'Hashtags, without ''#''.';
    COMMENT ON COLUMN videos.keywords IS 'Keywords the corpus gives.';
    COMMENT ON COLUMN videos.author_name IS 'The author''s name.';
    COMMENT ON COLUMN videos.author_bio IS 'The author''s bio or verification text.';
    COMMENT ON COLUMN videos.author_verified IS 'The author is verified, when the corpus says.';
    COMMENT ON COLUMN videos.like_count IS 'Likes.';
    COMMENT ON COLUMN videos.comment_count IS 'Comments, as the corpus counts them.';
    COMMENT ON COLUMN videos.collect_count IS 'Collects (saves).';
    COMMENT ON COLUMN videos.share_count IS 'Shares.';
    COMMENT ON COLUMN videos.duration_s IS 'Duration in seconds, from the corpus or the probe.';
    COMMENT ON COLUMN videos.published_at IS 'When published (UTC).';
    COMMENT ON COLUMN videos.label IS 'The corpus''s own label (FakeSV: real / fake / debunk).';
    COMMENT ON COLUMN videos.category IS 'The corpus''s category.';
    COMMENT ON COLUMN videos.synthetic IS 'A generated video, registered with media register-synthetic.';
    COMMENT ON COLUMN videos.media_path IS 'The media path the corpus names, when it names one.';
    COMMENT ON COLUMN videos.raw_ref IS 'Where the record sits in its input (file and line, or key).';
    COMMENT ON COLUMN videos.extra IS
        'Every field of the record the catalog has no column for (JSON): nothing is lost.';
    COMMENT ON COLUMN videos.record_hash IS
        'Hash of the record''s fields: a re-ingest rewrites only records whose hash changed.';
    COMMENT ON COLUMN videos.metadata_missing IS 'The record has no title, description, hashtags or keywords.';
    COMMENT ON COLUMN comments.run_id IS 'The ingest run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN videos.run_id IS 'The ingest run (runs.run_id) that last wrote this row.';
    COMMENT ON COLUMN shortcut_configs.run_id IS
        'The run (runs.run_id) that first used the configuration and wrote this row.';
    """,
    """
    -- an episode whose replayed state contradicts the runner's own result is graded from that result
    ALTER TABLE episode_grades ADD COLUMN replay_disagreement VARCHAR;
    COMMENT ON COLUMN episode_grades.replay_disagreement IS
        'When the replay, by the runner''s rule, contradicts the runner''s result: which check differed; NULL else.';
    -- an episode that ended without finish (the runner's step cap, or a run that broke off) is flagged
    ALTER TABLE episode_grades ADD COLUMN cut_off VARCHAR;
    COMMENT ON COLUMN episode_grades.cut_off IS 'Why the episode ended without finish, or NULL when it finished.';
    """,
    """
    -- how topical each built feed's anchor is (curation/corpus/coherence.py)
    CREATE TABLE feed_coherence (
        feed_id VARCHAR NOT NULL, version INTEGER NOT NULL, run_id VARCHAR,
        anchor_similarity DOUBLE, distractor_similarity DOUBLE, label VARCHAR, label_share DOUBLE,
        PRIMARY KEY (feed_id, version)
    );
    COMMENT ON TABLE feed_coherence IS 'How topical each built feed''s anchor is, measured when feeds build drew it.';
    COMMENT ON COLUMN feed_coherence.feed_id IS 'The feed (feeds.feed_id).';
    COMMENT ON COLUMN feed_coherence.version IS 'The feed version (feeds.version) measured.';
    COMMENT ON COLUMN feed_coherence.run_id IS 'The feeds run (runs.run_id) that measured it.';
    COMMENT ON COLUMN feed_coherence.anchor_similarity IS
        'Mean cosine between the anchor videos, centred vectors; NULL for one anchor video.';
    COMMENT ON COLUMN feed_coherence.distractor_similarity IS
        'Mean cosine between anchor videos and distractors, centred vectors; lower than anchor_similarity is right.';
    COMMENT ON COLUMN feed_coherence.label IS
        'The human label column the share is over; NULL when no anchor video carries a human label.';
    COMMENT ON COLUMN feed_coherence.label_share IS
        'Share of labelled anchor videos in the anchor''s most common value of that label.';
    """,
    """
    -- every annotation the import read from Label Studio, kept as it was read, and what the server lost of
    -- them (an annotation deleted there, or a restored backup that predates it): the catalog's tasks alone
    -- could not say which annotation stood for a task once the server's copy was gone. Annotations imported
    -- before this schema are taken from the tasks they became (their result was not kept then)
    CREATE TABLE ls_annotations (
        task_id VARCHAR NOT NULL, task_version INTEGER NOT NULL, ls_annotation_id INTEGER NOT NULL,
        base_url VARCHAR, project_id INTEGER, ls_task_id INTEGER, feed_id VARCHAR, feed_version INTEGER,
        person VARCHAR, completed_by INTEGER, result JSON, annotation_sha256 VARCHAR, annotated_at TIMESTAMP,
        imported_at TIMESTAMP, run_id VARCHAR, lost_at TIMESTAMP, lost_how VARCHAR,
        PRIMARY KEY (task_id, task_version, ls_annotation_id)
    );
    INSERT INTO ls_annotations (task_id, task_version, ls_annotation_id, base_url, project_id, ls_task_id, feed_id,
                                feed_version, person, annotation_sha256, annotated_at, imported_at, run_id)
    SELECT t.task_id, t.version, t.ls_annotation_id,
           (SELECT min(p.base_url) FROM ls_projects p WHERE p.project_id = t.ls_project_id), t.ls_project_id,
           t.ls_task_id, t.feed_id, t.base_feed_version, t.author, t.annotation_sha256, t.annotated_at,
           t.created_at, t.run_id
    FROM tasks t JOIN runs r ON r.run_id = t.run_id AND r.stage = 'annotate-import'
    WHERE t.ls_annotation_id IS NOT NULL AND t.ls_project_id IS NOT NULL;
    COMMENT ON TABLE ls_annotations IS
        'An authoring annotation as the import read it from Label Studio, and the task version it stands for.';
    COMMENT ON COLUMN ls_annotations.task_id IS 'The task (tasks.task_id) the annotation was read as.';
    COMMENT ON COLUMN ls_annotations.task_version IS
        'The task version it stands for (a re-written answer the same as before stands for the same version).';
    COMMENT ON COLUMN ls_annotations.ls_annotation_id IS 'Label Studio''s annotation id.';
    COMMENT ON COLUMN ls_annotations.base_url IS 'The Label Studio server''s URL.';
    COMMENT ON COLUMN ls_annotations.project_id IS 'Label Studio''s project id (ls_projects).';
    COMMENT ON COLUMN ls_annotations.ls_task_id IS 'The Label Studio task it was written on.';
    COMMENT ON COLUMN ls_annotations.feed_id IS 'The feed that task carried.';
    COMMENT ON COLUMN ls_annotations.feed_version IS
        'The feed version that task carried: with the project, feed and person, the authoring item.';
    COMMENT ON COLUMN ls_annotations.person IS 'Who wrote it (its completed_by), by name.';
    COMMENT ON COLUMN ls_annotations.completed_by IS 'Label Studio''s user id of who wrote it.';
    COMMENT ON COLUMN ls_annotations.result IS
        'The annotation''s result as Label Studio gave it (JSON); NULL for one imported before schema 25.';
    COMMENT ON COLUMN ls_annotations.annotation_sha256 IS 'Hash of the result.';
    COMMENT ON COLUMN ls_annotations.annotated_at IS 'When it was last changed in Label Studio (its updated_at).';
    COMMENT ON COLUMN ls_annotations.imported_at IS 'When the import read it (UTC).';
    COMMENT ON COLUMN ls_annotations.run_id IS 'The import run (runs.run_id) that wrote this row.';
    COMMENT ON COLUMN ls_annotations.lost_at IS
        'When an export or import found the server without it (UTC); NULL while the server has it.';
    COMMENT ON COLUMN ls_annotations.lost_how IS
        'What the server lost: the annotation, its task, or the whole project; NULL while the server has it.';
    COMMENT ON COLUMN tasks.ls_annotation_id IS
        'The Label Studio annotation the version was read from (the task is its authoring item: ls_annotations).';
    """,
    """
    -- what the per-task flags idle_passes and common_unmet_check read of each episode, kept with its grade so that
    -- every graded episode of a release counts for them, not only the grading run's; NULL in rows graded earlier
    ALTER TABLE episode_grades ADD COLUMN unmet_checks VARCHAR[];
    COMMENT ON COLUMN episode_grades.unmet_checks IS
        'Platform task, SR read from the end state: the checks it does not meet, by name; NULL when SR was not.';
    ALTER TABLE episode_grades ADD COLUMN acting_calls INTEGER;
    COMMENT ON COLUMN episode_grades.acting_calls IS
        'Valid click, swipe and type calls (none: a do-nothing-like episode); NULL in a row graded before schema 26.';
    """,
    """
    -- the group's decisions on released tasks audited from how models answered them (curate qc audit-tasks)
    CREATE TABLE audit_decisions (
        task_id VARCHAR NOT NULL, task_version INTEGER NOT NULL, release VARCHAR, decision VARCHAR, reasons VARCHAR[],
        note VARCHAR, decided_by VARCHAR, revised_version INTEGER, evidence JSON, ls_task_id INTEGER,
        ls_annotation_id INTEGER, annotation_sha256 VARCHAR, run_id VARCHAR, created_at TIMESTAMP,
        PRIMARY KEY (task_id, task_version)
    );
    COMMENT ON TABLE audit_decisions IS
        'The group''s decision on a released task version flagged by how models answered it (curate qc audit-tasks).';
    COMMENT ON COLUMN audit_decisions.task_id IS 'The task audited.';
    COMMENT ON COLUMN audit_decisions.task_version IS 'The released version audited; one decision per version.';
    COMMENT ON COLUMN audit_decisions.release IS 'The graded release whose episodes flagged it.';
    COMMENT ON COLUMN audit_decisions.decision IS 'keep, fix_answer, revise or retire.';
    COMMENT ON COLUMN audit_decisions.reasons IS 'Why it was retired: reasons from the fixed list (as in decisions).';
    COMMENT ON COLUMN audit_decisions.note IS 'The group''s note, cited in the CHANGELOG.';
    COMMENT ON COLUMN audit_decisions.decided_by IS
        'Who decided: the names typed, else the account that submitted (a release shows pseudonyms).';
    COMMENT ON COLUMN audit_decisions.revised_version IS 'The new version a fix or revision made (NULL otherwise).';
    COMMENT ON COLUMN audit_decisions.evidence IS
        'What the group was shown: the flags with their rules, the per-task table row, sample episodes.';
    COMMENT ON COLUMN audit_decisions.ls_task_id IS 'The Label Studio task of the audit project.';
    COMMENT ON COLUMN audit_decisions.ls_annotation_id IS 'The annotation the decision was read from.';
    COMMENT ON COLUMN audit_decisions.annotation_sha256 IS
        'Its content hash: a later change of the annotation is reported, not imported again.';
    COMMENT ON COLUMN audit_decisions.run_id IS 'The import run.';
    COMMENT ON COLUMN audit_decisions.created_at IS 'When the decision was imported.';
    COMMENT ON COLUMN qc_items.round IS
        'The calibration round, for pilot questions; the release audited, for a task audit.';
    COMMENT ON COLUMN qc_items.question IS
        'What was asked (JSON); for a task audit, the evidence shown (kept as audit_decisions.evidence).';
    """,
]
