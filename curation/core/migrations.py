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
    # 21: verdicts of record (curation/qc/shortcut_record.py). Every shortcut-filter configuration that ran,
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
]
